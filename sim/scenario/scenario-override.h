// `--set path.to.field=value`: one override of a scenario field, applied by Protobuf reflection
// after parsing and before validation. Works on any message type.
//
// Grammar: PATH=VALUE, PATH = SEGMENT ('.' SEGMENT)*, SEGMENT = FIELD | FIELD[SELECTOR].
// - a singular message field is descended into (and created when absent);
// - a repeated field needs [SELECTOR]: an index (0-based; index == size appends a new element)
//   or, for messages with a string field `name`, that name ("arms[spar].budget");
// - a map field takes its key as the next segment or as selector ("arms[0].options.dtype=bf16",
//   "arms[0].options[dtype]=bf16") and sets that one entry;
// - the last segment is parsed by its type: integers in decimal within the field's range, double
//   and float as decimals, bool as true|false|1|0, enum by value name or number, string as is;
//   a message as last segment takes VALUE in text format, merged into it
//   (`network.learner_uplink=bandwidth: "1Gbps"`).
// A misspelled path, a missing selector or an unparsable value is an error that names the path
// and lists the valid field names (or elements) at that level.
#ifndef HILOSIM_SCENARIO_SCENARIO_OVERRIDE_H
#define HILOSIM_SCENARIO_SCENARIO_OVERRIDE_H

#include "hilo/core/status.h"

#include <google/protobuf/message.h>

#include <string>

namespace hilosim
{

/// Applies `assignment` ("path=value") to `root`. Returns the canonical path of what was set,
/// with names resolved to indices ("arms[1].budget", "arms[0].options.dtype"). On error `root`
/// may hold a new empty element or entry created on the way (callers discard it on error).
hilo::StatusOr<std::string> ApplyOverride(google::protobuf::Message* root,
                                          const std::string& assignment);

} // namespace hilosim

#endif // HILOSIM_SCENARIO_SCENARIO_OVERRIDE_H
