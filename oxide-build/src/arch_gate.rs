//! Operations the built architectures lack: a kernel that uses a device-API operation needing
//! a newer GPU than the lowest architecture of the build is an error naming the operation, the
//! kernel and both architectures — found in the PTX, so it holds without ptxas (which would
//! print a screenful of "Feature ... requires" lines) and before a driver rejects the module.

use crate::error::{Error, ErrorKind};

/// A device-API operation by the PTX instruction it emits (a prefix), with the oldest
/// architecture oxide supports it on.
struct Operation {
    ptx: &'static str,
    api: &'static str,
    sm: u32,
}

const OPERATIONS: &[Operation] = &[
    Operation {
        ptx: "mma.sync.aligned.m16n8k16.row.col.f32.bf16",
        api: "tensor::mma_sync on Bf16 fragments (M16N8K16)",
        sm: 80,
    },
    Operation {
        ptx: "mma.sync.aligned.m16n8k16.row.col.f32.f16",
        api: "tensor::mma_sync on F16 fragments (M16N8K16)",
        sm: 80,
    },
    Operation {
        ptx: "mma.sync.aligned.m16n8k8.row.col.f32.tf32",
        api: "tensor::mma_sync on Tf32 fragments (M16N8K8)",
        sm: 80,
    },
    Operation { ptx: "mma.sync.aligned.m16n8k32", api: "tensor::mma_sync on i8 fragments (M16N8K32)", sm: 80 },
    Operation { ptx: "ldmatrix.", api: "tensor::ldmatrix_* (or FragA::load / FragB::load*)", sm: 80 },
    // Before `cp.async.`: the TMA forms share its prefix.
    Operation { ptx: "cp.async.bulk.tensor.", api: "tma::TensorMap::load / store", sm: 90 },
    Operation { ptx: "cp.async.bulk.", api: "tma::store_commit / store_wait", sm: 90 },
    Operation { ptx: "cp.async.", api: "tensor::cp_async / cp_async_matrix / cp_async_commit / cp_async_wait", sm: 80 },
    Operation { ptx: "mbarrier.init.", api: "mbarrier::Mbarriers::init", sm: 80 },
    Operation { ptx: "mbarrier.arrive.expect_tx.", api: "mbarrier::Mbarrier::arrive_expect_tx", sm: 90 },
    Operation { ptx: "mbarrier.arrive.", api: "mbarrier::Mbarrier::arrive", sm: 80 },
    Operation { ptx: "mbarrier.expect_tx.", api: "mbarrier::Mbarrier::expect_tx", sm: 90 },
    Operation { ptx: "mbarrier.complete_tx.", api: "mbarrier::Mbarrier::complete_tx", sm: 90 },
    Operation { ptx: "mbarrier.try_wait.", api: "mbarrier::Mbarrier::try_wait_parity / wait_parity", sm: 90 },
    Operation { ptx: "fence.mbarrier_init.", api: "mbarrier::fence_mbarrier_init (Mbarriers::init_async)", sm: 90 },
    Operation { ptx: "fence.proxy.async", api: "mbarrier::fence_proxy_async (= wgmma::fence_proxy_async)", sm: 90 },
    Operation { ptx: ".reqnctapercluster", api: "#[kernel(cluster(..))]", sm: 90 },
    Operation { ptx: "barrier.cluster.", api: "cluster::arrive / wait / sync", sm: 90 },
    Operation { ptx: "mapa.", api: "cluster::map_shared", sm: 90 },
    Operation { ptx: "elect.sync", api: "specialize::elect_sync", sm: 90 },
];

/// Special registers (matched anywhere in an instruction, e.g. `mov.u32 %r1, %cluster_ctarank`).
const REGISTERS: &[Operation] = &[
    Operation { ptx: "%cluster_", api: "cluster::ctarank / nctarank / cluster_dim / block_in_cluster", sm: 90 },
    Operation { ptx: "%clusterid", api: "cluster::cluster_idx", sm: 90 },
    Operation { ptx: "%nclusterid", api: "cluster::grid_clusters", sm: 90 },
];

/// Operations of the arch-specific targets only (`sm_90a`: `sm` with an `a`), which no plain
/// target has, however new.
const ARCH_SPECIFIC: &[Operation] = &[
    Operation { ptx: "setmaxnreg.", api: "specialize::warpgroup_registers (setmaxnreg_inc / setmaxnreg_dec)", sm: 90 },
    Operation { ptx: "wgmma.mma_async", api: "wgmma::WgRunning::mma_async", sm: 90 },
    Operation { ptx: "wgmma.fence", api: "wgmma::fence / WgAcc::start", sm: 90 },
    Operation { ptx: "wgmma.commit_group", api: "wgmma::commit_group", sm: 90 },
    Operation { ptx: "wgmma.wait_group", api: "wgmma::WgRunning::commit_wait / finish", sm: 90 },
];

/// `sm_90a` → 90.
fn number(arch: &str) -> u32 {
    arch.trim_start_matches("sm_").trim_end_matches('a').parse().unwrap_or(0)
}

/// Err when the PTX uses an operation newer than `lowest`, the lowest architecture built, or an
/// arch-specific one while some architecture of the build (`archs`) is not its target.
pub(crate) fn check(ptx: &str, lowest: &str, archs: &[String]) -> Result<(), Error> {
    let have = number(lowest);
    // An arch-specific target's PTX (`.target sm_90a`) only assembles for that target: the first
    // architecture of the build that is another one lacks every arch-specific operation.
    let other = |sm: u32| archs.iter().map(String::as_str).chain([lowest]).find(|a| *a != format!("sm_{sm}a"));
    let mut function = "";
    let mut found: Vec<String> = Vec::new();
    // The architecture the fix names: the newest one an operation needs (`a`: arch-specific).
    let mut needed = (80u32, false);
    for line in ptx.lines() {
        let line = line.trim_start();
        if let Some(name) = function_name(line) {
            function = name;
            continue;
        }
        // Inline PTX may put several instructions on one line, after `{` or `;`.
        for stmt in line.split([';', '{']) {
            let stmt = stmt.trim_start();
            let newer = OPERATIONS.iter().find(|op| op.sm > have && stmt.starts_with(op.ptx));
            let register = REGISTERS.iter().find(|op| op.sm > have && stmt.contains(op.ptx));
            let specific =
                ARCH_SPECIFIC.iter().find_map(|op| Some((op, other(op.sm)?)).filter(|_| stmt.starts_with(op.ptx)));
            let need = match (newer.or(register), specific) {
                (Some(op), _) => (op.sm, false),
                (None, Some((op, _))) => (op.sm, true),
                (None, None) => continue,
            };
            needed = needed.max(need);
            let what = if let Some(op) = newer.or(register) {
                let shown = match register {
                    Some(r) if newer.is_none() => stmt.split_whitespace().find(|w| w.contains(r.ptx)).unwrap_or(r.ptx),
                    _ => stmt.split_whitespace().next().unwrap_or(op.ptx),
                };
                let shown = shown.trim_end_matches(',');
                format!("`{}` (PTX `{shown}`), used by `{function}`, needs sm_{} or newer", op.api, op.sm)
            } else if let Some((op, arch)) = specific {
                format!(
                    "`{}` (PTX `{}`), used by `{function}`, needs the arch-specific target sm_{}a (`.arch(\"sm_{}a\")`) \
                     alone, but this build also targets {arch}",
                    op.api,
                    stmt.split_whitespace().next().unwrap_or(op.ptx),
                    op.sm,
                    op.sm
                )
            } else {
                continue;
            };
            if !found.contains(&what) {
                found.push(what);
            }
        }
    }
    if found.is_empty() {
        return Ok(());
    }
    let fix = if needed.1 {
        format!(
            "fix: build this module for `.arch(\"sm_{}a\")` alone in build.rs (its kernels then run on sm_{} GPUs only), \
             and keep kernels for other GPUs in another module",
            needed.0, needed.0
        )
    } else {
        format!(
            "fix: build for a newer architecture (`.arch(\"sm_{}\")` or later in build.rs), or move these kernels to a \
             module built only for GPUs that have them",
            needed.0
        )
    };
    Err(Error::new(
        ErrorKind::Arch,
        format!(
            "the kernels use operations that {lowest}, the oldest architecture this build targets, does not have:\n  {}\n  {fix}",
            found.join("\n  "),
        ),
    ))
}

/// The function a PTX line opens: `.visible .entry name(` or `.func (.param ..) name(`.
fn function_name(line: &str) -> Option<&str> {
    let at = line.find(".entry ").map(|p| p + 7).or_else(|| line.find(".func ").map(|p| p + 6))?;
    let mut rest = line[at..].trim_start();
    if let Some(r) = rest.strip_prefix('(') {
        // A return parameter: `.func (.param .b32 func_retval0) name(`.
        rest = r.split_once(')').map_or("", |(_, r)| r.trim_start());
    }
    let end = rest.find(|c: char| c == '(' || c.is_whitespace()).unwrap_or(rest.len());
    Some(&rest[..end]).filter(|n| !n.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = ".version 7.0\n.target sm_80\n\
        .func (.param .b32 func_retval0) helper(\n\t.param .b64 p)\n{\n\tret;\n}\n\
        .visible .entry gemm(\n\t.param .u64 a\n)\n{\n\
        \t// begin inline asm\n\
        \tmma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%r1, %r2, %r3, %r4}, {%r5, %r6, %r7, %r8}, {%r9, %r10}, {%r1, %r2, %r3, %r4};\n\
        \t{ .reg .u64 %oxg; .reg .u32 %oxs; cvta.to.shared.u64 %oxg, %rd1; cvt.u32.u64 %oxs, %oxg;\n\
        ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%oxs]; }\n\
        \t{ .reg .u64 %oxg; cvta.to.global.u64 %oxq, %rd2; cp.async.cg.shared.global [%oxs], [%oxq], 16, %r3; }\n\
        \tret;\n}\n";

    #[test]
    fn names_each_operation_its_kernel_and_both_architectures() {
        let e = check(PTX, "sm_75", &archs(&["sm_75"])).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Arch);
        let m = e.to_string();
        assert!(m.contains("sm_75, the oldest architecture"), "{m}");
        assert!(m.contains("`tensor::mma_sync on Bf16 fragments (M16N8K16)` (PTX `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32`), used by `gemm`, needs sm_80"), "{m}");
        assert!(m.contains("PTX `ldmatrix.sync.aligned.m8n8.x4.shared.b16`), used by `gemm`"), "{m}");
        assert!(m.contains("PTX `cp.async.cg.shared.global`), used by `gemm`"), "{m}");
        assert!(m.contains("fix: build for a newer architecture (`.arch(\"sm_80\")` or later"), "{m}");
    }

    #[test]
    fn new_enough_architectures_and_plain_kernels_pass() {
        check(PTX, "sm_80", &archs(&["sm_80"])).unwrap();
        check(PTX, "sm_90a", &archs(&["sm_90a"])).unwrap();
        check(
            ".visible .entry saxpy(\n)\n{\n\tfma.rn.f32 %f1, %f2, %f3, %f4;\n\tret;\n}\n",
            "sm_75",
            &archs(&["sm_75"]),
        )
        .unwrap();
    }

    const HOPPER: &str = ".version 8.0\n.target sm_90\n.visible .entry tma(\n\t.param .align 64 .b8 tma_param_0[128]\n)\n{\n\
        \t{ .reg .u64 %oxg; .reg .u32 %oxs; cvta.to.shared.u64 %oxg, %rd1; cvt.u32.u64 %oxs, %oxg;\n\
        mbarrier.init.shared::cta.b64 [%oxs], %r1; }\n\
        \tfence.mbarrier_init.release.cluster;\n\
        \t{ mbarrier.arrive.expect_tx.shared::cta.b64 _, [%oxs], %r2; }\n\
        \t{ cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%oxs], [%rd2, {%r3, %r4}], [%oxb]; }\n\
        \t{ mbarrier.try_wait.parity.shared::cta.b64 %oxp, [%oxs], %r5; }\n\
        \t{ mbarrier.arrive.shared.b64 %oxt, [%oxs]; }\n\
        \tfence.proxy.async.shared::cta;\n\tcp.async.bulk.commit_group;\n\tret;\n}\n";

    #[test]
    fn hopper_operations_need_sm_90_and_name_their_api() {
        let m = check(HOPPER, "sm_80", &archs(&["sm_80"])).unwrap_err().to_string();
        for (api, ptx) in [
            (
                "tma::TensorMap::load / store",
                "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
            ),
            ("mbarrier::Mbarrier::arrive_expect_tx", "mbarrier.arrive.expect_tx.shared::cta.b64"),
            ("mbarrier::Mbarrier::try_wait_parity / wait_parity", "mbarrier.try_wait.parity.shared::cta.b64"),
            ("mbarrier::fence_mbarrier_init (Mbarriers::init_async)", "fence.mbarrier_init.release.cluster"),
            ("mbarrier::fence_proxy_async (= wgmma::fence_proxy_async)", "fence.proxy.async.shared::cta"),
            ("tma::store_commit / store_wait", "cp.async.bulk.commit_group"),
        ] {
            assert!(m.contains(&format!("`{api}` (PTX `{ptx}`), used by `tma`, needs sm_90")), "{api}: {m}");
        }
        // init and a plain arrive are sm_80 operations.
        assert!(!m.contains("mbarrier.init") && !m.contains("mbarrier.arrive.shared"), "{m}");
        let m75 = check(HOPPER, "sm_75", &archs(&["sm_75"])).unwrap_err().to_string();
        assert!(
            m75.contains("`mbarrier::Mbarrier::arrive` (PTX `mbarrier.arrive.shared.b64`), used by `tma`, needs sm_80"),
            "{m75}"
        );
        check(HOPPER, "sm_90", &archs(&["sm_90"])).unwrap();
        check(HOPPER, "sm_90a", &archs(&["sm_90a"])).unwrap();
    }

    const CLUSTER: &str =
        ".version 8.0\n.target sm_90\n.visible .entry dsmem(\n)\n.explicitcluster\n.reqnctapercluster 2, 1, 1\n{\n\
        \tmov.u32 %r1, %cluster_ctarank;\n\tmov.u32 %r2, %clusterid.x;\n\
        \tbarrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;\n\tmapa.u64 %rd2, %rd1, %r3;\n\
        \t{ .reg .pred %oxp; elect.sync _|%oxp, 0xffffffff; }\n\tsetmaxnreg.inc.sync.aligned.u32 240;\n\tret;\n}\n";

    #[test]
    fn cluster_operations_need_sm_90_and_setmaxnreg_sm_90a() {
        let m = check(CLUSTER, "sm_80", &archs(&["sm_80"])).unwrap_err().to_string();
        for (api, ptx) in [
            ("#[kernel(cluster(..))]", ".reqnctapercluster"),
            ("cluster::ctarank / nctarank / cluster_dim / block_in_cluster", "%cluster_ctarank"),
            ("cluster::cluster_idx", "%clusterid.x"),
            ("cluster::arrive / wait / sync", "barrier.cluster.arrive.release"),
            ("cluster::map_shared", "mapa.u64"),
            ("specialize::elect_sync", "elect.sync"),
        ] {
            assert!(m.contains(&format!("`{api}` (PTX `{ptx}`), used by `dsmem`, needs sm_90 or newer")), "{api}: {m}");
        }
        let m90 = check(CLUSTER, "sm_90", &archs(&["sm_90"])).unwrap_err().to_string();
        assert!(!m90.contains("needs sm_90 or newer"), "{m90}");
        assert!(
            m90.contains("`specialize::warpgroup_registers (setmaxnreg_inc / setmaxnreg_dec)` (PTX `setmaxnreg.inc.sync.aligned.u32`), used by `dsmem`, needs the arch-specific target sm_90a"),
            "{m90}"
        );
        assert!(m90.contains("fix: build this module for `.arch(\"sm_90a\")` alone"), "{m90}");
        assert!(m.contains("fix: build this module for `.arch(\"sm_90a\")` alone"), "{m}");
        check(CLUSTER, "sm_90a", &archs(&["sm_90a"])).unwrap();
    }

    fn archs(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    const WGMMA: &str = ".version 8.0\n.target sm_90a\n.visible .entry hopper(\n)\n{\n\
        \twgmma.fence.sync.aligned;\n\
        \t{ .reg .pred %oxp; setp.ne.b32 %oxp, %r1, 0;\n\twgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%r2}, %rd1, %rd2, %oxp, 1, 1, 0, 0; }\n\
        \tsetmaxnreg.inc.sync.aligned.u32 240;\n\
        \tfence.proxy.async.shared::cta;\n\tret;\n}\n";

    #[test]
    fn arch_specific_operations_need_sm_90a_alone() {
        check(WGMMA, "sm_90a", &archs(&["sm_90a"])).unwrap();
        for (lowest, built) in [("sm_90", &["sm_90"][..]), ("sm_80", &["sm_80", "sm_90a"][..])] {
            let m = check(WGMMA, lowest, &archs(built)).unwrap_err().to_string();
            assert!(
                m.contains(&format!("`wgmma::WgRunning::mma_async` (PTX `wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16`), used by `hopper`, needs the arch-specific target sm_90a (`.arch(\"sm_90a\")`) alone, but this build also targets {lowest}")),
                "{m}"
            );
            assert!(m.contains("`wgmma::fence / WgAcc::start` (PTX `wgmma.fence.sync.aligned`)"), "{m}");
            assert!(
                m.contains("`specialize::warpgroup_registers (setmaxnreg_inc / setmaxnreg_dec)` (PTX `setmaxnreg.inc.sync.aligned.u32`)"),
                "{m}"
            );
            assert!(m.contains("fix: build this module for `.arch(\"sm_90a\")` alone"), "{m}");
        }
        // sm_80 also lacks the proxy fence (sm_90); plain sm_90 has it.
        let m = check(WGMMA, "sm_80", &archs(&["sm_80", "sm_90a"])).unwrap_err().to_string();
        assert!(m.contains("`mbarrier::fence_proxy_async (= wgmma::fence_proxy_async)` (PTX `fence.proxy.async.shared::cta`), used by `hopper`, needs sm_90 or newer"), "{m}");
        let m = check(WGMMA, "sm_90", &archs(&["sm_90"])).unwrap_err().to_string();
        assert!(!m.contains("fence_proxy_async"), "{m}");
    }

    #[test]
    fn function_names_come_from_entries_and_funcs() {
        assert_eq!(function_name(".visible .entry gemm("), Some("gemm"));
        assert_eq!(function_name(".func (.param .b32 func_retval0) helper("), Some("helper"));
        assert_eq!(function_name(".func helper2(.param .b64 p)"), Some("helper2"));
        assert_eq!(function_name("mma.sync.aligned"), None);
    }
}
