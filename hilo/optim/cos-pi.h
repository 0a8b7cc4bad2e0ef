// cos(pi p) computed in the project, without the host's libm: the learning-rate schedule enters
// every replica's replay, so it must give the same bits on every host, and two libm versions may
// disagree in the last bit of std::cos. Only IEEE double +, -, * (each correctly rounded, no
// contraction: the build passes -ffp-contract=off) in a fixed order, so the result is a pure
// function of p wherever this binary's source is compiled for IEEE doubles.
#ifndef HILO_OPTIM_COS_PI_H
#define HILO_OPTIM_COS_PI_H

namespace hilo
{

/// cos(pi * p) for p in [0, 1], within 2 ulp (double) of the exact value; exact at p = 0, 1/2 and
/// 1. Symmetries reduce p to [0, 1/4] (a cosine series) or (1/4, 1/2] (a sine series of
/// pi (1/2 - p)), with exact reductions; the series are Taylor polynomials truncated where the
/// next term is below 2^-60. REQUIRES: 0 <= p <= 1.
double CosPi(double p);

} // namespace hilo

#endif // HILO_OPTIM_COS_PI_H
