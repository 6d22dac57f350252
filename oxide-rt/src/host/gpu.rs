//! The CUDA side of the host runtime: contexts without panics, the embedded PTX loaded once per
//! context (with the JIT log on failure), and the checks every typed launcher runs first.

use super::Error;
use crate::LaunchConfig;
use cudarc::driver::sys::{CUdevice_attribute, CUfunction_attribute, CUjit_option};
use cudarc::driver::{
    result, sys, CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DriverError,
};
use std::ffi::{c_void, CString};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

fn driver_err(what: impl Into<String>) -> impl FnOnce(DriverError) -> Error {
    let what = what.into();
    move |source| Error::Driver { what, source }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding these locks cannot leave the caches half-written (each update is a
    // single push), so a poisoned lock is still safe to use.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The error for a failed `cuLaunchKernel` of `kernel` (`Error::ContextLost` when the context
/// is gone: an earlier kernel faulted).
pub fn launch_error(kernel: &'static str, source: DriverError) -> Error {
    let what = format!("launching kernel `{kernel}`");
    if super::panic::is_sticky(source.0) {
        return Error::ContextLost { ordinal: current_ordinal().unwrap_or(0), what, source };
    }
    Error::Driver { what, source }
}

/// The ordinal of the device whose context is current on this thread (the launching one, right
/// after a launch).
fn current_ordinal() -> Option<usize> {
    let mut dev: sys::CUdevice = 0;
    // SAFETY: writes one CUdevice through a valid pointer; fails harmlessly when no context is current.
    unsafe { sys::cuCtxGetDevice(&mut dev) }.result().ok()?;
    let count = result::device::get_count().ok()?;
    (0..count).find(|&i| result::device::get(i).is_ok_and(|d| d == dev)).and_then(|i| usize::try_from(i).ok())
}

/// True when libcuda loads, initialises, and reports at least one device.
pub fn gpu_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        // SAFETY: only tries to dlopen the driver library; no symbols are called.
        let present = unsafe { sys::is_culib_present() };
        present && result::init().is_ok() && result::device::get_count().map(|n| n > 0).unwrap_or(false)
    })
}

/// Streaming multiprocessors of the GPU `stream` runs on: how many blocks of a persistent
/// kernel (one block per SM, e.g. `DisjointPersistentWgmmaTiles`) to launch.
pub fn multiprocessors(stream: &CudaStream) -> Result<u32, Error> {
    let sms = stream
        .context()
        .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        .map_err(driver_err("reading the GPU's multiprocessor count"))?;
    Ok(sms.max(1) as u32)
}

/// A CUDA context and its default stream, created without cudarc's panic when no driver exists.
#[derive(Clone, Debug)]
pub struct Gpu {
    /// The device's primary context.
    pub ctx: Arc<CudaContext>,
    /// Its default stream: what the launchers take, and copies to and from the GPU
    /// (`stream.clone_htod(&v)?`, `stream.clone_dtoh(&buf)?`, `stream.alloc_zeros::<f32>(n)?`).
    pub stream: Arc<CudaStream>,
}

impl Gpu {
    /// GPU `ordinal` (0 = the first). `Err(Error::NoDriver)` / `Err(Error::NoDevice)` on a
    /// machine without one, where the CPU executor runs the same kernels (see `Backend::from_env`).
    pub fn new(ordinal: usize) -> Result<Gpu, Error> {
        // SAFETY: only tries to dlopen the driver library; no symbols are called.
        if !unsafe { sys::is_culib_present() } {
            return Err(Error::NoDriver);
        }
        result::init().map_err(driver_err("cuInit failed"))?;
        let count = result::device::get_count().map_err(driver_err("cuDeviceGetCount failed"))?;
        if count <= 0 {
            return Err(Error::NoDevice);
        }
        if ordinal >= count as usize {
            return Err(Error::NoSuchDevice { ordinal, count: count as usize });
        }
        let ctx = CudaContext::new(ordinal).map_err(driver_err(format!("creating a context on GPU {ordinal}")))?;
        let stream = ctx.default_stream();
        Ok(Gpu { ctx, stream })
    }

    /// How many GPUs the driver reports (0 without a driver), for one `Gpu::new(i)` per device.
    pub fn count() -> usize {
        if !gpu_available() {
            return 0;
        }
        result::device::get_count().map(|n| n.max(0) as usize).unwrap_or(0)
    }

    /// Waits for the stream; a kernel that panicked comes back as `Error::KernelPanic`
    /// (see [`synchronize`](super::synchronize)).
    pub fn synchronize(&self) -> Result<(), Error> {
        super::panic::synchronize(&self.stream)
    }

    /// The device's name and compute capability, e.g. `NVIDIA H200 (sm_90)`.
    pub fn describe(&self) -> String {
        let name = self.ctx.name().unwrap_or_else(|_| "unknown GPU".into());
        let major = self.ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR).unwrap_or(0);
        let minor = self.ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR).unwrap_or(0);
        format!("{name} (sm_{major}{minor})")
    }
}

/// Device limits a launch is checked against, read once per context.
#[derive(Clone, Copy, Debug)]
struct Limits {
    block: [u32; 3],
    grid: [u32; 3],
    shared_optin: u32,
}

impl Limits {
    fn query(ctx: &CudaContext) -> Result<Limits, Error> {
        use CUdevice_attribute::*;
        let get = |a| -> Result<u32, Error> {
            ctx.attribute(a).map(|v| v.max(0) as u32).map_err(driver_err(format!("reading device attribute {a:?}")))
        };
        Ok(Limits {
            block: [
                get(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
                get(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
                get(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
            ],
            grid: [
                get(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
                get(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
                get(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
            ],
            shared_optin: get(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
        })
    }
}

struct LoadedModule {
    ptx: usize,
    ctx: usize,
    module: Arc<CudaModule>,
    limits: Limits,
    /// Address of `_pad`, this context's [`EMPTY_INPUT_PAD`] for the module's launches.
    pad: u64,
    _pad: CudaSlice<u8>,
}

/// Every embedded PTX module loaded so far, per context. Kernels of one crate share one PTX
/// string, so they share one module per context.
static MODULES: Mutex<Vec<LoadedModule>> = Mutex::new(Vec::new());

fn module_for(
    stream: &Arc<CudaStream>,
    embedded: &'static crate::EmbeddedModule,
) -> Result<(Arc<CudaModule>, Limits, u64), Error> {
    let ctx = stream.context();
    let key = module_key(ctx, embedded);
    let mut modules = lock(&MODULES);
    if let Some(m) = modules.iter().find(|m| (m.ptx, m.ctx) == key) {
        return Ok((m.module.clone(), m.limits, m.pad));
    }
    let ptx = embedded.ptx;
    let limits = Limits::query(ctx)?;
    // The cubin for this device's arch when embedded, else the PTX (host/image.rs).
    let module = super::image::load(ctx, embedded, |source| Error::PtxLoad { log: jit_log(ctx, ptx), source })?;
    // Only modules oxide-build wrote have the panic buffer (CUDA C++ ones do not): asking the
    // driver for a missing global is an API error, which compute-sanitizer reports.
    if ptx.contains(super::panic::SYMBOL) {
        super::panic::install(ctx, &module)?;
    }
    reserve_stack(ctx, ptx)?;
    let pad = stream
        .alloc_zeros::<u8>(EMPTY_INPUT_PAD)
        .map_err(driver_err("allocating the pad that empty input slices point at"))?;
    let pad_addr = pad.device_ptr(stream).0;
    modules.push(LoadedModule { ptx: key.0, ctx: key.1, module: module.clone(), limits, pad: pad_addr, _pad: pad });
    Ok((module, limits, pad_addr))
}

/// The module cache's key: which embedded PTX, loaded in which context. Contexts are told apart
/// by their `Arc` (a cached module holds its context, so the address is never reused).
fn module_key(ctx: &Arc<CudaContext>, embedded: &'static crate::EmbeddedModule) -> (usize, usize) {
    (embedded.ptx.as_ptr() as usize, Arc::as_ptr(ctx) as usize)
}

/// The module when it is already loaded in the stream's context; never loads.
fn cached_module(
    stream: &Arc<CudaStream>,
    embedded: &'static crate::EmbeddedModule,
) -> Option<(Arc<CudaModule>, Limits, u64)> {
    let key = module_key(stream.context(), embedded);
    lock(&MODULES).iter().find(|m| (m.ptx, m.ctx) == key).map(|m| (m.module.clone(), m.limits, m.pad))
}

/// Per-thread stack the driver reserves when a module makes indirect calls (core::fmt in
/// `dprintln!` and debug-build panic messages): ptxas cannot bound such a stack, and the
/// driver's default of 1 KiB overflows into an illegal-address fault.
const INDIRECT_CALL_STACK: usize = 8 * 1024;

/// Raises the context's stack limit (never lowers it) for modules with indirect calls.
fn reserve_stack(ctx: &CudaContext, ptx: &str) -> Result<(), Error> {
    if !ptx.contains(".callprototype") {
        return Ok(());
    }
    let current =
        ctx.get_limit(sys::CUlimit::CU_LIMIT_STACK_SIZE).map_err(driver_err("reading the stack size limit"))?;
    if current < INDIRECT_CALL_STACK {
        ctx.set_limit(sys::CUlimit::CU_LIMIT_STACK_SIZE, INDIRECT_CALL_STACK).map_err(driver_err(format!(
            "raising the per-thread stack to {INDIRECT_CALL_STACK} bytes for a module with indirect calls"
        )))?;
    }
    Ok(())
}

/// Loads the PTX again through `cuModuleLoadDataEx` with log buffers, only to report why the
/// driver rejected it (cudarc's loader does not ask for the log).
fn jit_log(ctx: &CudaContext, ptx: &str) -> String {
    const LOG: usize = 16 * 1024;
    let Ok(src) = CString::new(ptx) else { return "the PTX contains a NUL byte".into() };
    if ctx.bind_to_thread().is_err() {
        return String::new();
    }
    let mut error_log = vec![0u8; LOG];
    let mut info_log = vec![0u8; LOG];
    let mut options = [
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        CUjit_option::CU_JIT_INFO_LOG_BUFFER,
        CUjit_option::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
    ];
    let mut values = [
        error_log.as_mut_ptr() as *mut c_void,
        LOG as *mut c_void,
        info_log.as_mut_ptr() as *mut c_void,
        LOG as *mut c_void,
    ];
    let mut module: sys::CUmodule = std::ptr::null_mut();
    // SAFETY: `src` is NUL-terminated PTX; each buffer option is paired with its size option and the buffers outlive the call; the context is bound to this thread above.
    let rc = unsafe {
        sys::cuModuleLoadDataEx(
            &mut module,
            src.as_ptr() as *const c_void,
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    };
    if rc == sys::CUresult::CUDA_SUCCESS && !module.is_null() {
        // SAFETY: the module was just loaded by us and nothing else refers to it.
        let _ = unsafe { result::module::unload(module) };
    }
    let text = |buf: &[u8]| {
        String::from_utf8_lossy(&buf[..buf.iter().position(|&b| b == 0).unwrap_or(buf.len())]).into_owned()
    };
    let (err, info) = (text(&error_log), text(&info_log));
    match (err.trim().is_empty(), info.trim().is_empty()) {
        (false, false) => format!("{err}\n{info}"),
        (false, true) => err,
        _ => info,
    }
}

/// Bytes of the zeroed buffer that empty input slices point at (one per loaded module).
///
/// oxide-build reads element 0 of a `&[T]` input ahead of its bounds check (see
/// `oxide-build/src/ir/guarded_loads.rs`, which hoists loads of at most 16 bytes), so element 0
/// must be readable even when the slice is empty.
pub const EMPTY_INPUT_PAD: usize = 256;

/// Per-thread local memory a kernel may use on every current GPU (CUDA's limit since sm_20).
pub const MAX_LOCAL_PER_THREAD: u32 = 512 * 1024;

/// Above this much shared memory per block (static + dynamic) the driver wants a per-function
/// opt-in.
const SHARED_WITHOUT_OPT_IN: u32 = 48 * 1024;

/// The suffix of a kernel's copy for 1-D launches in release builds' PTX (oxide-build's
/// `ir/one_d_copies.rs`): the same kernel with the y and z thread and block registers read
/// as a 1-D launch has them, so its index arithmetic folds away.
pub const ONE_D_SUFFIX: &str = "__oxide_1d";

/// The suffix of a kernel's copy without the bounds checks that its launch-wide test covers
/// (oxide-build's `ir/versioned_checks.rs`; `Kernel::unchecked_copy`).
pub const UNCHECKED_SUFFIX: &str = "__oxide_vc";

/// A kernel's function in one context, with the attributes the launch checks use.
struct Function {
    ctx: usize,
    /// Serves 1-D launches: the kernel's 1-D copy, or the kernel where the module has none.
    one_d: bool,
    /// The unchecked copy of that function.
    unchecked: bool,
    func: CudaFunction,
    max_threads: u32,
    static_shared: u32,
    local_bytes: u32,
}

/// One `#[kernel]` of an embedded PTX module: a `static` in every generated launcher.
pub struct Kernel {
    name: &'static str,
    /// The function's name in the module: `name` for Rust kernels, the C++-mangled name of a
    /// CUDA C++ kernel.
    symbol: &'static str,
    module: &'static crate::EmbeddedModule,
    /// Whether the module may hold a copy for 1-D launches (Rust kernels).
    has_copies: bool,
    functions: Mutex<Vec<Function>>,
    /// The launch-wide tests of the unchecked copies (of the kernel, of its 1-D copy), read
    /// from the PTX on first use.
    tests: OnceLock<[Option<super::unchecked::Test>; 2]>,
    /// Which choices between the copy and the kernel `OXIDE_LOG=1` has shown (one bit each).
    logged: AtomicU8,
}

impl Kernel {
    pub const fn new(module: &'static crate::EmbeddedModule, name: &'static str) -> Kernel {
        Kernel {
            name,
            symbol: name,
            module,
            has_copies: true,
            functions: Mutex::new(Vec::new()),
            tests: OnceLock::new(),
            logged: AtomicU8::new(0),
        }
    }

    /// A kernel whose function in the module is `symbol` (a CUDA C++ kernel's mangled name),
    /// reported in errors as `name`.
    pub const fn with_symbol(
        module: &'static crate::EmbeddedModule,
        name: &'static str,
        symbol: &'static str,
    ) -> Kernel {
        Kernel {
            name,
            symbol,
            module,
            has_copies: false,
            functions: Mutex::new(Vec::new()),
            tests: OnceLock::new(),
            logged: AtomicU8::new(0),
        }
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The kernel's function in the stream's context (loading the module on first use) after
    /// checking `cfg` against the device and the function's own limits; also the address that
    /// empty input slices are passed as ([`EMPTY_INPUT_PAD`]).
    ///
    /// A panic of an earlier launch in the context not yet reported comes back here
    /// (`Error::KernelPanic`), as does a device fault (`Error::ContextLost`).
    pub fn prepare(
        &'static self,
        stream: &Arc<CudaStream>,
        cfg: &LaunchConfig,
    ) -> Result<(CudaFunction, cudarc::driver::LaunchConfig, u64), Error> {
        self.prepare_inner(stream, cfg).map_err(|e| match e {
            e @ Error::InvalidLaunch { .. } => e,
            e => super::panic::explain(stream.context(), e),
        })
    }

    fn prepare_inner(
        &'static self,
        stream: &Arc<CudaStream>,
        cfg: &LaunchConfig,
    ) -> Result<(CudaFunction, cudarc::driver::LaunchConfig, u64), Error> {
        // Under stream capture the launch becomes a node of a graph, which is only sound in a
        // capture `Graph::capture` runs (host/graph.rs), and nothing may load there.
        let capturing = super::graph::capture_kind(self.name, stream)? == super::graph::Capture::Oxide;
        let one_d = self.has_copies && is_one_d(cfg);
        let found = if capturing {
            self.cached_function(stream, one_d, false)
        } else {
            Some(self.function(stream, one_d, false)?)
        };
        let Some(f) = found else {
            return Err(super::graph::defer_load(self));
        };
        check(self.name, cfg, &f.limits, f.max_threads)?;
        check_memory(self.name, cfg.shared_mem_bytes, f.static_shared, f.limits.shared_optin, f.local_bytes)?;
        if cfg.shared_mem_bytes.saturating_add(f.static_shared) > SHARED_WITHOUT_OPT_IN {
            // Above 48 KiB in all the driver wants an explicit opt-in per function.
            f.func
                .set_attribute(
                    CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    cfg.shared_mem_bytes as i32,
                )
                .map_err(driver_err(format!(
                    "allowing {} bytes of dynamic shared memory for kernel `{}`",
                    cfg.shared_mem_bytes, self.name
                )))?;
        }
        if capturing {
            // Not run now: the graph re-notes its launches at each replay (panic reports).
            super::panic::check_pending(stream)?;
            super::graph::record_launch(self.name, cfg);
        } else {
            super::panic::note_launch(stream, self.name, cfg)?;
        }
        let raw = cudarc::driver::LaunchConfig {
            grid_dim: (cfg.grid.x, cfg.grid.y, cfg.grid.z),
            block_dim: (cfg.block.x, cfg.block.y, cfg.block.z),
            shared_mem_bytes: cfg.shared_mem_bytes,
        };
        Ok((f.func, raw, f.pad))
    }

    /// Loads the kernel's module and functions in the stream's context (outside any capture).
    pub(crate) fn load(&'static self, stream: &Arc<CudaStream>) -> Result<(), Error> {
        self.function(stream, false, false)?;
        if self.has_copies {
            self.function(stream, true, false)?;
            for one_d in [false, true] {
                if self.test(one_d).is_some() {
                    self.function(stream, one_d, true)?;
                }
            }
        }
        Ok(())
    }

    /// `func` (what [`prepare`](Self::prepare) returned for `cfg`), or the kernel's copy
    /// without the bounds checks its launch-wide test covers when the test passes for this
    /// launch (for a kernel with block-stride row loops: the copy that keeps its checks and
    /// assumes its 64-bit integers below 2^29): `values` are the kernel's integer parameters by
    /// name, as the launcher pushes them. The copy computes what the kernel computes wherever
    /// the test passes (oxide-build's `ir/versioned_checks.rs`); a copy whose resources differ
    /// from the kernel's is not used.
    pub fn unchecked_copy(
        &'static self,
        stream: &Arc<CudaStream>,
        cfg: &LaunchConfig,
        func: CudaFunction,
        values: &[(&str, Option<u64>)],
    ) -> Result<CudaFunction, Error> {
        let one_d = self.has_copies && is_one_d(cfg);
        let Some(test) = self.test(one_d) else { return Ok(func) };
        if let Some(failed) = test.failure(cfg, values) {
            self.log_choice(one_d, false, &format!("its launch-wide test failed at {failed}"));
            return Ok(func);
        }
        // Under capture nothing may load: the copy serves only once loaded (`load` does that).
        let capturing = super::graph::capture_kind(self.name, stream)? == super::graph::Capture::Oxide;
        let (copy, kernel) = match capturing {
            true => (self.cached_function(stream, one_d, true), self.cached_function(stream, one_d, false)),
            false => (Some(self.function(stream, one_d, true)?), Some(self.function(stream, one_d, false)?)),
        };
        let (Some(copy), Some(kernel)) = (copy, kernel) else { return Ok(func) };
        let threads = u64::from(cfg.block.x) * u64::from(cfg.block.y) * u64::from(cfg.block.z);
        // (Above 48 KiB of shared memory the driver wants a per-function opt-in, which
        // `prepare` gave the kernel only.)
        let same_resources = copy.static_shared == kernel.static_shared
            && copy.local_bytes <= kernel.local_bytes
            && cfg.shared_mem_bytes.saturating_add(copy.static_shared) <= SHARED_WITHOUT_OPT_IN;
        let fits = same_resources && threads <= u64::from(copy.max_threads);
        self.log_choice(one_d, fits, if fits { "its launch-wide test passed" } else { "its resources differ" });
        Ok(if fits { copy.func } else { func })
    }

    /// With `OXIDE_LOG=1`, says once per outcome whether a launch ran the copy.
    fn log_choice(&self, one_d: bool, copy: bool, why: &str) {
        let bit = 1u8 << (u8::from(one_d) * 2 + u8::from(copy));
        if super::image::log_enabled() && self.logged.fetch_or(bit, Ordering::Relaxed) & bit == 0 {
            let what = if copy { "its launch-wide copy runs" } else { "the kernel itself runs" };
            let shape = if one_d { " (1-D launch)" } else { "" };
            eprintln!("oxide: {}{shape}: {what}: {why}", self.name);
        }
    }

    /// The test of the unchecked copy of the kernel (or of its 1-D copy), if the PTX has one.
    fn test(&self, one_d: bool) -> Option<&super::unchecked::Test> {
        let tests = self.tests.get_or_init(|| {
            [false, true].map(|one_d| {
                let base = self.base_symbol(one_d);
                super::unchecked::Test::find(self.module.ptx, &format!("{base}{UNCHECKED_SUFFIX}"))
            })
        });
        tests[usize::from(one_d)].as_ref()
    }

    /// The function serving a launch that is 1-D or not: the 1-D copy where the module has one.
    fn base_symbol(&self, one_d: bool) -> String {
        let copy = format!("{}{ONE_D_SUFFIX}", self.symbol);
        match one_d && self.module.ptx.contains(&format!(".entry {copy}(")) {
            true => copy,
            false => self.symbol.to_string(),
        }
    }

    /// The kernel's function for a launch that is 1-D or not, in the stream's context, loading
    /// its module on first use.
    fn function(&'static self, stream: &Arc<CudaStream>, one_d: bool, unchecked: bool) -> Result<Loaded, Error> {
        if let Some(f) = self.cached_function(stream, one_d, unchecked) {
            return Ok(f);
        }
        let (module, limits, pad) = module_for(stream, self.module)?;
        let ctx_key = Arc::as_ptr(stream.context()) as usize;
        let mut funcs = lock(&self.functions);
        if let Some(f) = funcs.iter().find(|f| f.ctx == ctx_key && f.one_d == one_d && f.unchecked == unchecked) {
            return Ok(f.loaded(limits, pad));
        }
        // Debug builds, kernels whose copy came out the same, and prebuilt PTX of older versions
        // have no copy: the kernel serves. (Asking the driver for a missing symbol would be an
        // API error that compute-sanitizer reports.) Unchecked copies are asked for only where
        // their test was found in the PTX.
        let base = self.base_symbol(one_d);
        let symbol = if unchecked { format!("{base}{UNCHECKED_SUFFIX}") } else { base };
        let symbol = symbol.as_str();
        let f = module.load_function(symbol).map_err(|source| Error::Driver {
            what: format!(
                "kernel `{}` (`{symbol}`) is not in the embedded PTX (was the crate built with oxide-build?)",
                self.name
            ),
            source,
        })?;
        let attr = |a: CUfunction_attribute, what: &str| {
            f.get_attribute(a)
                .map(|v| v.max(0) as u32)
                .map_err(driver_err(format!("reading the {what} of kernel `{}`", self.name)))
        };
        let function = Function {
            ctx: ctx_key,
            one_d,
            unchecked,
            max_threads: attr(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "thread limit")?,
            static_shared: attr(
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                "static shared memory size",
            )?,
            local_bytes: attr(CUfunction_attribute::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "local memory size")?,
            func: f,
        };
        let loaded = function.loaded(limits, pad);
        funcs.push(function);
        Ok(loaded)
    }

    /// The kernel's function when it and its module are already loaded in the stream's context.
    fn cached_function(&'static self, stream: &Arc<CudaStream>, one_d: bool, unchecked: bool) -> Option<Loaded> {
        let (_, limits, pad) = cached_module(stream, self.module)?;
        let ctx_key = Arc::as_ptr(stream.context()) as usize;
        lock(&self.functions)
            .iter()
            .find(|f| f.ctx == ctx_key && f.one_d == one_d && f.unchecked == unchecked)
            .map(|f| f.loaded(limits, pad))
    }
}

/// Whether the launch's grid and block are 1 in y and z (the 1-D copy computes the same there).
fn is_one_d(cfg: &LaunchConfig) -> bool {
    let (g, b) = (cfg.grid, cfg.block);
    g.y == 1 && g.z == 1 && b.y == 1 && b.z == 1
}

/// What a launch needs of a loaded kernel: its function, limits and the context's pad.
struct Loaded {
    func: CudaFunction,
    limits: Limits,
    pad: u64,
    max_threads: u32,
    static_shared: u32,
    local_bytes: u32,
}

impl Function {
    fn loaded(&self, limits: Limits, pad: u64) -> Loaded {
        Loaded {
            func: self.func.clone(),
            limits,
            pad,
            max_threads: self.max_threads,
            static_shared: self.static_shared,
            local_bytes: self.local_bytes,
        }
    }
}

fn check(kernel: &'static str, cfg: &LaunchConfig, limits: &Limits, max_threads: u32) -> Result<(), Error> {
    let bad = |reason: String| Err(Error::InvalidLaunch { kernel, reason });
    let (b, g) = (cfg.block, cfg.grid);
    if b.volume() == 0 || g.volume() == 0 {
        return bad(format!("empty launch: grid {g:?}, block {b:?}; every dimension must be at least 1"));
    }
    if b.volume() > max_threads as u64 {
        return bad(format!(
            "block of {} threads ({}x{}x{}) exceeds this kernel's limit of {max_threads} threads per block on this device",
            b.volume(), b.x, b.y, b.z
        ));
    }
    for (i, axis) in ["x", "y", "z"].iter().enumerate() {
        let (bv, gv) = ([b.x, b.y, b.z][i], [g.x, g.y, g.z][i]);
        if bv > limits.block[i] {
            return bad(format!("block.{axis} = {bv} exceeds the device limit {}", limits.block[i]));
        }
        if gv > limits.grid[i] {
            return bad(format!("grid.{axis} = {gv} exceeds the device limit {}", limits.grid[i]));
        }
    }
    super::check_thread_count(kernel, cfg)
}

/// Shared memory (the kernel's static arrays plus the launch's dynamic window) against the
/// per-block limit, and the kernel's per-thread local memory (its stack frame: local arrays,
/// spills) against [`MAX_LOCAL_PER_THREAD`]. Shared by the GPU and the CPU executor.
pub(crate) fn check_memory(
    kernel: &'static str,
    dynamic_shared: u32,
    static_shared: u32,
    shared_limit: u32,
    local_bytes: u32,
) -> Result<(), Error> {
    let bad = |reason: String| Err(Error::InvalidLaunch { kernel, reason });
    let total = u64::from(dynamic_shared) + u64::from(static_shared);
    if total > u64::from(shared_limit) {
        return bad(format!(
            "{static_shared} bytes of static shared memory (the kernel's shared arrays) + {dynamic_shared} bytes of \
             dynamic shared memory = {total} bytes exceed the limit of {shared_limit} bytes per block; \
             request at most {} bytes of dynamic shared memory or make the static arrays smaller",
            shared_limit.saturating_sub(static_shared)
        ));
    }
    if local_bytes > MAX_LOCAL_PER_THREAD {
        return bad(format!(
            "the kernel needs {local_bytes} bytes of local memory (stack) per thread, more than the \
             {MAX_LOCAL_PER_THREAD} bytes a GPU thread can have; move large arrays to a device buffer \
             (a `&[T]`/`DisjointSlice<T>` argument) or to shared memory"
        ));
    }
    Ok(())
}
