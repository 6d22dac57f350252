//! struct kernels of the suite against their CUDA C++ twins (`cuda/suite/structs.cu`).

use crate::cases::saxpy::cfg_raw;
use crate::cases::Case;
use crate::harness::{Bench, Res, Row, Work};
use cudarc::driver::PushKernelArg;
use oxide_suite::kernels::structs as k;
use oxide_suite::structs::*;

pub fn cases() -> Vec<(&'static str, Case)> {
    vec![("particles_step", particles), ("mat4_batch", mat4)]
}

/// One particle step over 2^24 particles in six arrays, in place (384 MiB read, 384 MiB
/// written). The timed runs keep stepping the same particles; fresh copies are checked.
fn particles(b: &Bench) -> Res<Row> {
    let n: usize = 1 << 24;
    let s = &b.stream;
    let p = particles_problem(1, n);
    let cfg = particles_config(n);
    let st = &p.state;
    let upload = || -> Res<_> {
        Ok([
            s.clone_htod(&st.px)?,
            s.clone_htod(&st.py)?,
            s.clone_htod(&st.pz)?,
            s.clone_htod(&st.vx)?,
            s.clone_htod(&st.vy)?,
            s.clone_htod(&st.vz)?,
        ])
    };
    let oxide_step = |d: &mut [cudarc::driver::CudaSlice<f32>; 6]| -> Res<()> {
        let [px, py, pz, vx, vy, vz] = d;
        Ok(k::launch_particles_step_with(s, cfg, p.params, px, py, pz, vx, vy, vz)?)
    };
    let mut d = upload()?;
    let oxide_ms = b.time(|| oxide_step(&mut d))?;

    let (_m, f) = b.twin("suite/structs", "particles_step")?;
    let n32 = n as i32;
    let twin_step = |d: &mut [cudarc::driver::CudaSlice<f32>; 6]| -> Res<()> {
        let [px, py, pz, vx, vy, vz] = d;
        let mut l = s.launch_builder(&f);
        l.arg(&p.params).arg(px).arg(py).arg(pz).arg(vx).arg(vy).arg(vz).arg(&n32);
        // SAFETY: the twin's signature is (StepParams {float dt, gravity, floor, restitution, drag}, float* px, py, pz, vx, vy, vz, int n); the six buffers hold n floats each, and StepParams has the same five-float layout.
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    };
    let mut t = upload()?;
    let cuda_ms = b.time(|| twin_step(&mut t))?;

    let want = particles_reference(&p);
    let download = |d: &[cudarc::driver::CudaSlice<f32>; 6]| -> Res<Particles> {
        Ok(Particles {
            px: s.clone_dtoh(&d[0])?,
            py: s.clone_dtoh(&d[1])?,
            pz: s.clone_dtoh(&d[2])?,
            vx: s.clone_dtoh(&d[3])?,
            vy: s.clone_dtoh(&d[4])?,
            vz: s.clone_dtoh(&d[5])?,
        })
    };
    let mut d = upload()?;
    oxide_step(&mut d)?;
    particles_compare(&download(&d)?, &want)
        .map_err(|e| format!("oxide particles_step differs from the reference: {e}"))?;
    let mut t = upload()?;
    twin_step(&mut t)?;
    particles_compare(&download(&t)?, &want).map_err(|e| format!("CUDA twin differs from the reference: {e}"))?;
    Ok(Row {
        kernel: "particles_step".into(),
        size: "2^24 particles".into(),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(2.0 * 6.0 * 4.0 * n as f64),
        reference: None,
        regs: Some(b.regs("particles_step", &f)?),
        max_error: 0.0,
    })
}

/// 2^22 products of 4x4 f32 matrices (256 MiB per operand and for the result).
fn mat4(b: &Bench) -> Res<Row> {
    let n: usize = 1 << 22;
    let s = &b.stream;
    let p = mat4_problem(1, n);
    let cfg = mat4_config(n);
    let (da, db) = (s.clone_htod(&p.a)?, s.clone_htod(&p.b)?);
    let zero = vec![Mat4 { m: [[0.0; 4]; 4] }; n];
    let mut dout = s.clone_htod(&zero)?;
    let oxide_ms = b.time(|| Ok(k::launch_mat4_batch_with(s, cfg, &da, &db, &mut dout)?))?;

    let (_m, f) = b.twin("suite/structs", "mat4_batch")?;
    let mut tout = s.clone_htod(&zero)?;
    let n32 = n as i32;
    let cuda_ms = b.time(|| {
        let mut l = s.launch_builder(&f);
        l.arg(&da).arg(&db).arg(&mut tout).arg(&n32);
        // SAFETY: the twin's signature is (const Mat4* a, const Mat4* b, Mat4* out, int n) with Mat4 a 16-byte aligned float[4][4], the layout of the Rust Mat4; each buffer holds n matrices.
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    })?;

    let want = mat4_reference(&p);
    let got = s.clone_dtoh(&dout)?;
    mat4_compare(&got, &want).map_err(|e| format!("oxide mat4_batch differs from the reference: {e}"))?;
    mat4_compare(&s.clone_dtoh(&tout)?, &want).map_err(|e| format!("CUDA twin differs from the reference: {e}"))?;
    let max_error = got
        .iter()
        .zip(&want)
        .flat_map(|(g, w)| (0..16).map(move |e| (g.m[e / 4][e % 4] as f64 - w.0[e / 4][e % 4]).abs()))
        .fold(0.0, f64::max);
    Ok(Row {
        kernel: "mat4_batch".into(),
        size: "2^22 products".into(),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(3.0 * 64.0 * n as f64),
        reference: None,
        regs: Some(b.regs("mat4_batch", &f)?),
        max_error,
    })
}
