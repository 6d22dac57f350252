//! pairwise kernels (device side).
