use oxide_rt::device::*;

// `Matrix<'static, _>` would hand the kernel `&'static` references into the caller's buffer
// (the CPU launcher lends a host slice), which it could keep past the launch.
#[kernel]
pub fn k(m: Matrix<'static, f32>) {
    let _ = m.as_slice();
}

fn main() {}
