#!/usr/bin/python3
"""Where an encode's CPU goes, from a perf call-graph profile of hilo-compress-bench.

Reads `perf script -F tid,ip,sym,dso | c++filt` on stdin, keeps the samples whose stack matches
STACK_REGEX (e.g. the spar encode's functions), and prints, as a share of those samples, how often
each hilo function and each kind of library call appears in the stack (inclusive) and which leaf
functions the samples sit in (self).

    perf record -F 400 --call-graph dwarf,16384 -o enc.data build/tests/hilo-compress-bench \\
        --benchmark_filter='BM_Encode/14/(16|50)/'
    perf script -i enc.data -F tid,ip,sym,dso | c++filt | \\
        tests/bench/hilo-profile-buckets.py 'SparCompressor::Encode|SpectralTruncation::'

--drop-first-fill leaves out samples in memset or page faults called from Plan itself: the scratch
a Plan fills the first time it runs (a one-time cost the benchmark's timed encodes do not pay).
"""
import collections
import re
import sys

# Library calls worth naming (first match in a frame wins).
KINDS = ('linalg_eigh', 'linalg_qr', 'linalg_eigvalsh', '_ops::mm::', '_ops::mm_out::',
         '_ops::to', '_ops::flip', '_ops::contiguous', '_ops::zeros', '_ops::empty', 'sgemm_',
         'ssyrk_', 'dsyevd', 'dgeqrf', 'dorgqr', 'malloc', 'free', 'exc_page_fault', 'memset',
         'memcpy')


def frames_of(sample):
    lines = sample.strip().split('\n')[1:]
    return [l.strip().split(' ', 1)[1] for l in lines if ' ' in l.strip()]


def name_of(frame):
    for k in KINDS:
        if k in frame:
            return k
    if 'hilo::' in frame:
        n = re.sub(r'[(<].*', '', frame)
        return n.replace('hilo::(anonymous namespace)::', '').replace('hilo::', '')
    return None


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    if len(args) != 1:
        sys.exit('usage: hilo-profile-buckets.py [--drop-first-fill] STACK_REGEX < perf-script.txt')
    want = re.compile(args[0])
    drop_fill = '--drop-first-fill' in sys.argv
    incl, leaf = collections.Counter(), collections.Counter()
    total = kept = dropped = 0
    for sample in sys.stdin.read().split('\n\n'):
        frames = frames_of(sample)
        if not frames:
            continue
        total += 1
        if not want.search('\n'.join(frames)):
            continue
        hilo = [f for f in frames if 'hilo::' in f]
        if (drop_fill and hilo and hilo[0].startswith('hilo::SpectralTruncation::Plan') and
                any(k in f for f in frames[:6] for k in ('memset', 'page_fault', 'pvm_irq'))):
            dropped += 1
            continue
        kept += 1
        seen = set()
        for f in frames:
            n = name_of(f)
            if n and n not in seen:
                seen.add(n)
                incl[n] += 1
        leaf[re.sub(r' \(.*', '', frames[0])[:80]] += 1
    print(f'samples {total}, matching {kept + dropped}, first fill dropped {dropped}, kept {kept}')
    print('inclusive share of kept samples:')
    for k, v in incl.most_common(30):
        print(f'{100.0 * v / max(kept, 1):6.1f}%  {k[:100]}')
    print('self (leaf) share of kept samples:')
    for k, v in leaf.most_common(15):
        print(f'{100.0 * v / max(kept, 1):6.1f}%  {k}')


if __name__ == '__main__':
    main()
