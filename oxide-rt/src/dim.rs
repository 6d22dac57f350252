//! Launch geometry shared by host launchers, the CPU executor and device indices.

/// The most threads one launch may have (2^63; CUDA's own limits allow up to 2^73). Below it
/// `thread::index()`, computed in `usize` without overflow checks, cannot wrap: no two threads
/// get one index, and the device code tells the optimiser so. Launchers refuse larger launches.
pub const MAX_LAUNCH_THREADS: u64 = 1 << 63;

/// A three-dimensional extent or index, as CUDA's `dim3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dim3 {
    /// The fastest-varying dimension (consecutive threads of a warp differ in `x`).
    pub x: u32,
    /// The second dimension.
    pub y: u32,
    /// The third dimension.
    pub z: u32,
}

impl Dim3 {
    /// `dim3(x, y, z)`; `Dim3::from(n)` or a bare `u32` is `(n, 1, 1)`.
    pub const fn new(x: u32, y: u32, z: u32) -> Self {
        Dim3 { x, y, z }
    }

    /// Number of elements in the extent (`x * y * z`), without overflow.
    pub const fn volume(self) -> u64 {
        self.x as u64 * self.y as u64 * self.z as u64
    }
}

impl From<u32> for Dim3 {
    fn from(x: u32) -> Self {
        Dim3::new(x, 1, 1)
    }
}

impl From<(u32, u32)> for Dim3 {
    fn from((x, y): (u32, u32)) -> Self {
        Dim3::new(x, y, 1)
    }
}

impl From<(u32, u32, u32)> for Dim3 {
    fn from((x, y, z): (u32, u32, u32)) -> Self {
        Dim3::new(x, y, z)
    }
}

/// Grid, block and dynamic shared memory of one launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Blocks in the grid.
    pub grid: Dim3,
    /// Threads per block.
    pub block: Dim3,
    /// Dynamic shared memory per block, in bytes (`shared::dynamic_shared` on the device).
    pub shared_mem_bytes: u32,
}

impl LaunchConfig {
    /// `grid` blocks of `block` threads, no dynamic shared memory; each is a `u32`, a
    /// `(u32, u32)`, a `(u32, u32, u32)` or a [`Dim3`].
    pub fn new(grid: impl Into<Dim3>, block: impl Into<Dim3>) -> Self {
        LaunchConfig { grid: grid.into(), block: block.into(), shared_mem_bytes: 0 }
    }

    /// Enough blocks of `block_size` threads to cover `n` elements in one dimension.
    pub fn for_num_elems(n: u32, block_size: u32) -> Self {
        let block_size = block_size.max(1);
        LaunchConfig::new(n.div_ceil(block_size).max(1), block_size)
    }

    /// Sets the dynamic shared memory per block, in bytes.
    pub fn shared_mem_bytes(mut self, bytes: u32) -> Self {
        self.shared_mem_bytes = bytes;
        self
    }
}
