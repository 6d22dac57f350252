// Edge handling of the filters: an index past either end repeats the nearest cell.
#pragma once

__host__ __device__ inline int clamp_index(int v, int hi) { return v < 0 ? 0 : (v > hi ? hi : v); }
