//! CUDA C++ sources through the public API with the real nvcc, ptxas and libclang (installed
//! by ci/setup.sh): what compiles, what the launchers look like, and every error a user can hit.

use oxide_build::{Build, ErrorKind};

use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// A kernels crate with `files` (path, text) in the test's target dir (so the device build
/// reuses the workspace lockfile and the shared `core` build).
fn crate_with(name: &str, files: &[(&str, &str)]) -> (PathBuf, Build) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("oxide-build-cuda").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let mut b = oxide_build::kernels("src/kernels.rs");
    b.manifest_dir(&dir)
        .out_dir(dir.join("out"))
        .target_dir(workspace().join("target/oxide-device"))
        .oxide_rt_dir(workspace().join("oxide-rt"))
        .package(name)
        .arch("sm_90")
        .cargo_metadata(false);
    (dir, b)
}

const KERNELS: &str = "use oxide_rt::device::*;\noxide_rt::include_cuda!();\n#[kernel]\npub fn gain(p: Params, x: &[f32], mut y: DisjointSlice<f32>) {\n    let i = thread::index();\n    if let Some(o) = y.get_mut(i) { *o = x[i.get()] * p.gain + p.bias as f32; }\n}\n";

const PARAMS_H: &str = "#pragma once\nstruct Params { float gain; int radius; double bias; };\n";

const GOOD_CU: &str = r#"#include "params.h"
__global__ void scale(const float* x, float* y, Params p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * p.gain + p.bias;
}
template <typename T>
__global__ void addk(const T* a, T* b, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] += a[i];
}
template __global__ void addk<float>(const float*, float*, unsigned);
template __global__ void addk<double>(const double*, double*, unsigned);
extern "C" __global__ void fill(int* out, int v) { out[threadIdx.x] = v; }
"#;

#[test]
fn mangled_template_and_extern_c_kernels_get_typed_launchers() {
    let (dir, mut b) = crate_with(
        "good",
        &[("src/kernels.rs", KERNELS), ("src/shared/params.h", PARAMS_H), ("src/legacy/filters.cu", GOOD_CU)],
    );
    b.cuda_source("src/legacy/filters.cu").cuda_include("src/shared");
    let out = b.try_compile().unwrap_or_else(|e| panic!("{e}"));
    let cuda = out.cuda.expect("CUDA C++ output");
    let kernels: Vec<(&str, &str)> = cuda.kernels.iter().map(|(n, s)| (n.as_str(), s.as_str())).collect();
    for k in [
        ("scale", "_Z5scalePKfPf6Paramsi"),
        ("addk_f32", "_Z4addkIfEvPKT_PS0_j"),
        ("addk_f64", "_Z4addkIdEvPKT_PS0_j"),
        ("fill", "fill"),
    ] {
        assert!(kernels.contains(&k), "{k:?} in {kernels:?}");
    }
    let rs = std::fs::read_to_string(&cuda.bindings).unwrap();
    let flat: String = rs.split_whitespace().collect::<Vec<_>>().join(" ");
    for want in [
        "pub unsafe fn launch_scale( stream: &::oxide_rt::__private::Arc<::oxide_rt::__private::CudaStream>,",
        "x: &impl ::oxide_rt::__private::DeviceInput<f32>, y: &mut impl ::oxide_rt::__private::DeviceOutput<f32>, p: Params, n: i32,",
        "pub unsafe fn launch_addk_f64(",
        "arg0: &impl ::oxide_rt::__private::DeviceInput<f64>, arg1: &mut impl ::oxide_rt::__private::DeviceOutput<f64>, arg2: u32,",
        "pub unsafe fn launch_fill_with(",
        "out: &mut impl ::oxide_rt::__private::DeviceOutput<i32>, v: i32,",
        "pub fn cpu_scale(",
        "Kernel::with_symbol( &__OXIDE_CUDA_MODULE_FILTERS_CU, \"addk_f32\", \"_Z4addkIfEvPKT_PS0_j\", )",
        "#[derive(::oxide_rt::KernelArg)] pub struct Params",
        "::core::mem::offset_of!(Params, bias) == 8,",
    ] {
        assert!(flat.contains(want), "{want}\nnot in:\n{rs}");
    }
    // nvcc's PTX for the lowest arch, a cubin per arch, and every header nvcc read.
    let ptx = std::fs::read_to_string(&cuda.ptx[0]).unwrap();
    assert!(ptx.contains(".target sm_90") && ptx.contains(".entry _Z4addkIfEvPKT_PS0_j("), "{ptx}");
    let (arch, cubin) = &cuda.cubins[0];
    assert_eq!(arch, "sm_90");
    assert_eq!(&std::fs::read(cubin).unwrap()[..4], b"\x7fELF");
    assert!(cuda.deps.contains(&dir.join("src/shared/params.h")), "{:?}", cuda.deps);
    // The Rust kernel takes the same struct: its nvptx64 layout is in the manifest.
    let manifest = std::fs::read_to_string(&out.manifest).unwrap();
    assert!(manifest.contains("__oxide_layout_Params_"), "{manifest}");
}

#[test]
fn a_cu_file_that_does_not_compile_shows_nvccs_message_at_file_and_line() {
    let (_, mut b) = crate_with(
        "nvcc_error",
        &[
            ("src/kernels.rs", "pub fn nothing() {}\n"),
            ("src/bad.cu", "__global__ void k(float* y) {\n    y[0] = 1.0f;\n    y[1] = undefined_name;\n}\n"),
        ],
    );
    b.cuda_source("src/bad.cu");
    let err = b.try_compile().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::CudaCompile, "{err}");
    let msg = err.to_string();
    assert!(msg.contains("src/bad.cu:3: error: identifier \"undefined_name\" is undefined"), "{msg}");
    assert!(msg.contains("command: ") && msg.contains("nvcc") && msg.contains("-ptx"), "{msg}");
}

#[test]
fn a_reference_parameter_is_an_error_naming_kernel_parameter_and_fix() {
    let (_, mut b) = crate_with(
        "reference_param",
        &[
            ("src/kernels.rs", "pub fn nothing() {}\n"),
            ("src/ref.cu", "__global__ void bump(float* y, const float& step) { y[threadIdx.x] += step; }\n"),
        ],
    );
    b.cuda_source("src/ref.cu");
    let err = b.try_compile().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::CudaBindings, "{err}");
    let msg = err.to_string();
    assert!(msg.contains("kernel `bump(float*, float const&)` (src/ref.cu)"), "{msg}");
    assert!(msg.contains("parameter `step`") && msg.contains("fix: take a pointer"), "{msg}");
}

#[test]
fn an_unknown_parameter_type_is_an_error_naming_it() {
    let (_, mut b) = crate_with(
        "unknown_param",
        &[
            ("src/kernels.rs", "pub fn nothing() {}\n"),
            (
                "src/bits.cu",
                "union Bits { float f; unsigned u; };\n__global__ void h(float* y, Bits b) { y[threadIdx.x] = b.f; }\n",
            ),
        ],
    );
    b.cuda_source("src/bits.cu");
    let err = b.try_compile().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::CudaBindings, "{err}");
    let msg = err.to_string();
    assert!(msg.contains("kernel `h(float*, Bits)` (src/bits.cu): parameter `b` has type `Bits`"), "{msg}");
    assert!(msg.contains("oxide knows no Rust type for `Bits`") && msg.contains("fix: "), "{msg}");
}

#[test]
fn a_rust_struct_whose_layout_differs_from_the_header_is_an_error_naming_the_field() {
    let kernels = "use oxide_rt::device::*;\noxide_rt::include_cuda!();\n\
                   #[derive(Clone, Copy, KernelArg)]\n#[repr(C)]\npub struct Params { pub gain: f32, pub bias: f64, pub radius: i32 }\n";
    let (_, mut b) = crate_with(
        "layout_mismatch",
        &[
            ("src/kernels.rs", kernels),
            ("src/params.h", PARAMS_H),
            ("src/k.cu", "#include \"params.h\"\n__global__ void k(float* y, Params p) { y[0] = p.gain; }\n"),
        ],
    );
    b.cuda_source("src/k.cu").cuda_struct_in_rust("Params");
    let err = b.try_compile().unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("field `radius` of shared struct `Params` is not at offset 4"), "{msg}");
    assert!(msg.contains("C (clang for nvptx64, as src/k.cu sees it)"), "{msg}");
}

#[test]
fn an_edited_header_is_tracked_and_rebuilds_the_launchers_and_ptx() {
    let (dir, mut b) = crate_with(
        "header_edit",
        &[
            ("src/kernels.rs", "pub fn nothing() {}\n"),
            ("src/inc/p.h", "struct P { float a; };\n"),
            ("src/k.cu", "#include \"inc/p.h\"\n__global__ void k(float* y, P p) { y[0] = p.a; }\n"),
        ],
    );
    b.cuda_source("src/k.cu");
    let first = b.try_compile().unwrap_or_else(|e| panic!("{e}")).cuda.expect("CUDA C++ output");
    assert!(first.deps.contains(&dir.join("src/inc/p.h")), "the header reruns the build: {:?}", first.deps);
    let ptx_before = std::fs::read_to_string(&first.ptx[0]).unwrap();
    std::fs::write(dir.join("src/inc/p.h"), "struct P { float a; double scale; };\n").unwrap();
    let second = b.try_compile().unwrap_or_else(|e| panic!("{e}")).cuda.expect("CUDA C++ output");
    let rs = std::fs::read_to_string(&second.bindings).unwrap();
    assert!(rs.contains("pub scale: f64"), "the new field reaches the Rust struct:\n{rs}");
    let tight: String = rs.chars().filter(|c| !c.is_whitespace()).collect();
    assert!(tight.contains("size_of::<P>()==16"), "and its layout assertion:\n{rs}");
    let ptx_after = std::fs::read_to_string(&second.ptx[0]).unwrap();
    assert!(
        ptx_before.contains(".b8 _Z1kPf1P_param_1[4]") && ptx_after.contains(".b8 _Z1kPf1P_param_1[16]"),
        "{ptx_after}"
    );
}

#[test]
fn rust_kernels_call_cuda_cpp_device_functions_inlined_and_the_host_gets_them_too() {
    let kernels = "use oxide_rt::device::*;\n\
        extern \"C\" {\n    fn clamp_index(v: i32, hi: i32) -> i32;\n}\n\
        #[kernel]\npub fn clamp_all(x: &[i32], hi: i32, mut y: DisjointSlice<i32>) {\n    let i = thread::index();\n    \
        if let (Some(o), Some(v)) = (y.get_mut(i), x.get(i.get())) {\n        \
        // SAFETY: a pure function of its arguments.\n        *o = unsafe { clamp_index(*v, hi) };\n    }\n}\n";
    let helpers = "extern \"C\" __host__ __device__ int clamp_index(int v, int hi) {\n    \
                   return v < 0 ? 0 : (v > hi ? hi : v);\n}\n";
    let (dir, mut b) = crate_with("device_functions", &[("src/kernels.rs", kernels), ("src/helpers.cu", helpers)]);
    b.cuda_device_source("src/helpers.cu");
    let out = b.try_compile().unwrap_or_else(|e| panic!("{e}"));
    let ptx = std::fs::read_to_string(&out.ptx).unwrap();
    assert!(ptx.contains(".entry clamp_all("), "{ptx}");
    assert!(!ptx.contains("clamp_index"), "the C++ function is inlined into the Rust kernel:\n{ptx}");
    assert!(ptx.contains("min.s32"), "its clamp is there:\n{ptx}");
    assert!(out.validated, "ptxas validated the linked module");
    assert!(out.cuda.expect("CUDA C++ output").deps.contains(&dir.join("src/helpers.cu")));
    // The host half, for the CPU executor.
    let lib = dir.join("out/liboxide_cuda_host_device_functions.a");
    let bytes = std::fs::read(&lib).unwrap_or_else(|e| panic!("{}: {e}", lib.display()));
    assert!(bytes.windows(b"clamp_index".len()).any(|w| w == b"clamp_index"), "the host object defines clamp_index");
}

#[test]
fn a_shared_header_alone_gives_rust_kernels_its_structs() {
    let kernels = "use oxide_rt::device::*;\noxide_rt::include_cuda!();\n\
                   #[kernel]\npub fn scaled(q: Q, mut y: DisjointSlice<f32>) {\n    \
                   if let Some(o) = y.get_mut(thread::index()) { *o = q.k as f32 * q.s; }\n}\n";
    let (_, mut b) = crate_with(
        "header_only",
        &[("src/kernels.rs", kernels), ("include/q.h", "#include <stdint.h>\nstruct Q { int16_t k; float s; };\n")],
    );
    b.shared_header("include/q.h");
    let out = b.try_compile().unwrap_or_else(|e| panic!("{e}"));
    let rs = std::fs::read_to_string(out.cuda.expect("CUDA C++ output").bindings).unwrap();
    let tight: String = rs.chars().filter(|c| !c.is_whitespace()).collect();
    assert!(tight.contains("pubstructQ{pubk:i16,pubs:f32,}"), "{rs}");
    assert!(tight.contains("offset_of!(Q,s)==4"), "{rs}");
    assert!(std::fs::read_to_string(&out.manifest).unwrap().contains("__oxide_layout_Q_"), "the Rust kernel takes it");
}
