// atomics kernels of the suite, written the way a CUDA programmer would (int indices,
// __restrict__, no handicaps). extern "C" so the benchmark finds them by name.
