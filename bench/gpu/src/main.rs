//! `oxide-bench-gpu --twins <dir> [--csv <file>] [--only <kernel>,..] [--batch N]`: every example kernel and
//! every kernel of the frozen suite (`bench/suite`) against its CUDA C++ twin (nvcc -O3
//! -arch=sm_90, PTX in `<dir>`), timed the same way, plus
//! the device-to-device copy ceiling of the same run. `bench/gpu/run.sh` does it all.

mod cases;
mod graph;
mod harness;
mod launch;
mod suite;

use harness::{Bench, Res, Row, Work};
use std::fmt::Write as _;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Res<()> {
    let args: Vec<String> = std::env::args().collect();
    let opt = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let twins = opt("--twins")
        .ok_or("usage: oxide-bench-gpu --twins <dir of nvcc PTX> [--csv file] [--only kernel,kernel..] [--batch N]")?;
    let gpu = oxide_rt::host::Gpu::new(0)?;
    let bench = Bench {
        ctx: gpu.ctx.clone(),
        stream: gpu.stream.clone(),
        twins: twins.into(),
        warmup: 5,
        iters: 51,
        batch: match opt("--batch") {
            Some(n) => n.parse().ok().filter(|&n| n > 0).ok_or(format!("--batch {n}: expected a count above 0"))?,
            None => 1,
        },
        suite: Default::default(),
    };
    println!("GPU: {}", gpu.describe());

    let ceiling = copy_ceiling(&bench)?;
    println!(
        "device copy ceiling: {ceiling:.0} GB/s (bytes read + written, 1 GiB dtod copy, median of {})",
        bench.iters
    );

    if opt("--only").is_none_or(|o| o.split(',').any(|o| o == "launch")) {
        let o = launch::measure(&bench)?;
        println!(
            "host time per launch (saxpy, 1 block, median of 21 batches of 1000): typed launcher {:.2} us, raw cudarc launch_builder {:.2} us, ratio {:.3}",
            o.oxide_us, o.raw_us, o.oxide_us / o.raw_us
        );
    }

    if opt("--only").is_none_or(|o| o.split(',').any(|o| o == "graph")) {
        println!("| launches | direct us/launch | graph replay us/launch | direct / graph | capture ms |");
        println!("| ---: | ---: | ---: | ---: | ---: |");
        for launches in [10, 100, 1000] {
            let g = graph::measure(&bench, launches)?;
            println!(
                "| {} | {:.2} | {:.2} | {:.2} | {:.2} |",
                g.launches,
                g.direct_us,
                g.graph_us,
                g.direct_us / g.graph_us,
                g.capture_ms
            );
        }
    }

    // A failing case (a wrong result, a twin that did not compile) is reported and the run goes
    // on, so one broken kernel does not hide the others' numbers; the exit status says it.
    let mut rows: Vec<Row> = Vec::new();
    let mut failed: Vec<String> = Vec::new();
    for (name, case) in cases::all().into_iter().chain(suite::all()) {
        if opt("--only").is_some_and(|o| !o.split(',').any(|o| o == name)) {
            continue;
        }
        match case(&bench) {
            Ok(row) => rows.push(row),
            Err(e) => {
                eprintln!("case {name} FAILED: {e}");
                failed.push(format!("{name}: {e}"));
            }
        }
    }

    let mut table = String::new();
    let _ = writeln!(table, "| kernel | size | oxide ms | CUDA C++ ms | oxide / CUDA | registers oxide / CUDA | oxide throughput | of ceiling | reference | max abs error |");
    let _ = writeln!(table, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |");
    let mut csv = String::from(
        "kernel,size,oxide_ms,cuda_ms,ratio,oxide_regs,cuda_regs,throughput,unit,fraction_of_ceiling,reference,reference_ms,max_abs_error\n",
    );
    for r in &rows {
        let (tp, unit) = r.throughput();
        let frac = match r.work {
            Work::Bytes(_) => format!("{:.2}", tp / ceiling),
            Work::Flops(_) => "-".into(),
        };
        let reference = r
            .reference
            .as_ref()
            .map(|(n, ms)| {
                format!(
                    "{n} {ms:.3} ms (oxide/{n} time = {:.2}, oxide = {:.2} of {n})",
                    r.oxide_ms / ms,
                    ms / r.oxide_ms
                )
            })
            .unwrap_or_else(|| "-".into());
        let (regs, regs_csv) = match r.regs {
            Some((o, c)) => (format!("{o} / {c}"), format!("{o},{c}")),
            None => ("-".into(), ",".into()),
        };
        let _ = writeln!(
            table,
            "| {} | {} | {:.3} | {:.3} | {:.3} | {regs} | {tp:.1} {unit} | {frac} | {reference} | {:.2e} |",
            r.kernel,
            r.size,
            r.oxide_ms,
            r.cuda_ms,
            r.ratio(),
            r.max_error
        );
        let (rn, rms) = r.reference.as_ref().map(|(n, ms)| (n.clone(), format!("{ms:.4}"))).unwrap_or_default();
        let _ = writeln!(
            csv,
            "{},\"{}\",{:.4},{:.4},{:.4},{regs_csv},{tp:.2},{unit},{frac},{rn},{rms},{:.3e}",
            r.kernel,
            r.size, // quoted: sizes may contain commas
            r.oxide_ms,
            r.cuda_ms,
            r.ratio(),
            r.max_error
        );
    }
    // The examples (tuned with the pipeline) and the frozen suite are summarised apart.
    let examples: Vec<&str> = cases::all().iter().map(|(n, _)| *n).collect();
    let (ex, su): (Vec<&Row>, Vec<&Row>) = rows.iter().partition(|r| examples.contains(&r.kernel.as_str()));
    println!("\n{table}");
    for (what, group) in [("examples", &ex), ("frozen suite", &su)] {
        if group.is_empty() {
            continue;
        }
        let geomean = (group.iter().map(|r| r.ratio().ln()).sum::<f64>() / group.len() as f64).exp();
        let worst =
            group.iter().map(|r| (r.ratio(), r.kernel.as_str())).fold((0.0, ""), |a, b| if b.0 > a.0 { b } else { a });
        let over = group.iter().filter(|r| r.ratio() > 1.10).count();
        println!(
            "{what}: geometric mean oxide / CUDA C++ time {geomean:.3} over {} kernels; worst: {} at {:.3}; {over} above 1.10",
            group.len(),
            worst.1,
            worst.0
        );
    }
    if let Some(path) = opt("--csv") {
        std::fs::write(&path, csv)?;
        println!("CSV written to {path}");
    }
    if !failed.is_empty() {
        return Err(format!("{} case(s) failed:\n  {}", failed.len(), failed.join("\n  ")).into());
    }
    Ok(())
}

/// Device-to-device copy bandwidth (bytes read + written) of a 1 GiB buffer.
fn copy_ceiling(b: &Bench) -> Res<f64> {
    let n = 1usize << 28; // f32s
    let src = b.stream.alloc_zeros::<f32>(n)?;
    let mut dst = b.stream.alloc_zeros::<f32>(n)?;
    let ms = b.time(|| Ok(b.stream.memcpy_dtod(&src, &mut dst)?))?;
    Ok(2.0 * 4.0 * n as f64 / (ms * 1e-3) / 1e9)
}
