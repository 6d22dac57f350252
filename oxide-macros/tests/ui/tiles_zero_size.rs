use oxide_rt::device::*;

// A tile without rows: refused when the kernel is compiled, not left to own nothing at run time.
#[kernel(dims = 2)]
pub fn k(mut out: DisjointTiles<f32, 0, 32>) {
    if let Some(v) = out.get_mut(0, 0) {
        *v = 1.0;
    }
}

fn main() {}
