//! What the device API compiles to: checked on the PTX this crate's build.rs produced.

const PTX: &str = include_str!(env!("OXIDE_PTX"));

/// The PTX of kernel `name`: from its `.entry` to the next function.
fn entry(name: &str) -> &'static str {
    let start = PTX.find(&format!(".entry {name}(")).unwrap_or_else(|| panic!("kernel {name} is not in the PTX"));
    let rest = &PTX[start + 1..];
    let end = [".entry ", ".func ", "// .globl"].iter().filter_map(|m| rest.find(m)).min().unwrap_or(rest.len());
    &PTX[start..start + 1 + end]
}

fn barriers(body: &str) -> usize {
    body.lines().filter(|l| l.trim_start().starts_with("barrier.sync")).count()
}

#[test]
fn block_barriers_are_never_the_aligned_forms() {
    // Jump threading may copy a barrier into both arms of a branch; only the non-`.aligned`
    // forms allow threads to meet at different instructions.
    let aligned: Vec<&str> = PTX
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with("bar.sync") || l.starts_with("bar.red") || l.starts_with("bar.arrive"))
        .collect();
    assert!(aligned.is_empty(), "aligned barriers in the PTX: {aligned:?}");
    assert!(barriers(entry("barrier_after_branch")) >= 1);
}

#[test]
fn a_barrier_in_a_loop_stays_one_barrier() {
    // One before the loop, one inside it.
    let body = entry("dynamic_shared_sum");
    assert_eq!(barriers(body), 2, "{body}");
}

#[test]
fn barrier_reductions_use_barrier_red() {
    let body = entry("barrier_reductions");
    assert!(body.contains("barrier.red.popc.u32"), "{body}");
    assert!(body.contains("barrier.red.and.pred"), "{body}");
    assert!(body.contains("barrier.red.or.pred"), "{body}");
}

#[test]
fn fences_and_warp_barrier() {
    let body = entry("fences");
    for insn in ["membar.cta", "membar.gl", "membar.sys", "bar.warp.sync"] {
        assert!(body.contains(insn), "{insn} missing:\n{body}");
    }
}

#[test]
fn static_shared_arrays_live_in_shared_memory() {
    let body = entry("shared_reverse");
    // 16-byte aligned whatever the element type (`shared_array!`), for ldmatrix and cp.async.
    assert!(PTX.contains(".shared .align 16 .b8"), "a .shared array is declared, 16-byte aligned");
    assert!(body.contains("st.shared") && body.contains("ld.shared"), "{body}");
    let t = entry("shared_transpose");
    assert!(t.contains("st.shared") && t.contains("ld.shared"), "{t}");
}

#[test]
fn dynamic_shared_memory_is_the_extern_window_sized_by_the_launch() {
    assert!(PTX.contains(".extern .shared .align 16 .b8 __oxide_dynamic_shared[]"));
    let body = entry("dynamic_shared_sum");
    assert!(body.contains("%dynamic_smem_size"), "{body}");
}

#[test]
fn scoped_atomics() {
    let body = entry("atomics_shared");
    // Block and device scope go through core atomics, so LLVM sees the shared address space
    // and emits `atom.shared` like nvcc's atomicAdd on __shared__ memory; system scope keeps
    // its explicit `.sys` qualifier on a generic address.
    for insn in [
        "atom.shared.add.u32",
        "atom.shared.min.u32",
        "atom.relaxed.sys.max.u32",
        "atom.shared.and.b32",
        "atom.shared.or.b32",
        "atom.relaxed.sys.xor.b32",
        "shared.cas.b32",
        "atom.shared.exch.b32",
        "atom.shared.min.s32",
        "atom.shared.max.s32",
        "atom.shared.add.u64",
        "atom.relaxed.sys.add.u64",
        "atom.shared.max.u64",
        "atom.shared.min.s64",
    ] {
        assert!(body.contains(insn), "{insn} missing:\n{body}");
    }
    let f = entry("atomics_float");
    // Device scope: LLVM's own float atomics (`ir/float_atomics.rs`), so the buffer's address
    // space is known (`atom.global`, as nvcc emits); system scope keeps its `.sys` asm.
    assert!(f.contains("atom.global.add.f32") && f.contains("atom.relaxed.sys.add.f32"), "{f}");
    assert!(f.contains("atom.global.add.f64"), "{f}");
}

#[test]
fn core_atomics_compile_to_ptx_atomics() {
    let body = entry("core_atomics");
    // core's `fetch_add` / `fetch_max` become PTX atomics (system scope: core has no scopes).
    assert!(body.contains("atom.") && body.contains(".add.u32"), "{body}");
    assert!(body.contains(".max.u32"), "{body}");
}

#[test]
fn warp_collectives() {
    let body = entry("warp_ops");
    for insn in [
        "shfl.sync.idx.b32",
        "shfl.sync.up.b32",
        "shfl.sync.down.b32",
        "shfl.sync.bfly.b32",
        "vote.sync.all.pred",
        "vote.sync.any.pred",
        "vote.sync.ballot.b32",
        "activemask.b32",
        "%laneid",
    ] {
        assert!(body.contains(insn), "{insn} missing:\n{body}");
    }
}

#[test]
fn bit_intrinsics() {
    let body = entry("bit_ops");
    for insn in ["popc.b32", "popc.b64", "clz.b32", "clz.b64", "brev.b32", "brev.b64"] {
        assert!(body.contains(insn), "{insn} missing:\n{body}");
    }
}

#[test]
fn libdevice_math_is_linked_in() {
    // Comments may name inlined libdevice blocks (`// %__nv_cosf.exit`); code may not.
    let code =
        PTX.lines().map(|l| l.split("//").next().unwrap_or("")).filter(|l| l.contains("__nv_")).collect::<Vec<_>>();
    assert!(code.is_empty(), "unresolved libdevice references: {code:?}");
    assert!(entry("golden_f32").contains("sqrt.rn.f32"), "math::sqrt on f32 is sqrt.rn.f32");
    assert!(entry("golden_f64").contains("sqrt.rn.f64"));
}

#[test]
fn fast_math_uses_approximate_instructions() {
    let body = entry("golden_f32");
    for insn in [
        "ex2.approx.ftz.f32",
        "lg2.approx.ftz.f32",
        "sin.approx.ftz.f32",
        "cos.approx.ftz.f32",
        "rsqrt.approx.ftz.f32",
        "rcp.approx.ftz.f32",
    ] {
        assert!(body.contains(insn), "{insn} missing:\n{body}");
    }
}

#[test]
fn printing_calls_vprintf() {
    assert!(PTX.contains("vprintf"), "dprintln! goes through vprintf");
}

#[test]
fn panics_record_into_the_panic_buffer_and_trap() {
    assert!(PTX.contains("__oxide_panic_buffer"), "the panic buffer global is in the module");
    assert!(PTX.contains("trap;"), "panics trap");
}

#[test]
fn launch_bounds_reach_the_ptx() {
    let body = entry("bounded");
    assert!(body.contains(".maxntid 256, 1, 1"), "{body}");
    assert!(body.contains(".minnctapersm 2"), "{body}");
}

#[test]
fn no_std_dependency_code_is_compiled_in() {
    let body = entry("collatz");
    assert!(body.contains("mul.lo.s64") || body.contains("mad.lo.s64"), "3n+1 from shared-logic is inlined:\n{body}");
}

#[test]
fn sixteen_byte_elements_move_as_one_vector_access() {
    // `[f32; 4]` buffers are 16-byte aligned (`device::buffer_align`): one `v4` load and store
    // per element instead of four.
    let body = entry("quad_mix");
    assert!(body.contains("ld.global.nc.v4.f32") || body.contains("ld.global.nc.v4.b32"), "{body}");
    assert!(body.contains("st.global.v4.f32") || body.contains("st.global.v4.b32"), "{body}");
}
