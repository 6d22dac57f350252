//! CUDA graphs of typed launches: capture once, replay many times, soundly.
//!
//! A captured graph keeps the device addresses its launches were given. Replaying it after one
//! of those buffers was freed reads and writes freed memory, which safe code must not be able
//! to do. So typed launchers run under stream capture only inside [`Graph::capture`], which
//! takes ownership of the buffers (`B`) and checks every buffer argument of a captured launch
//! to lie inside them; the [`Graph`] keeps `B` alive and unmoved until it is dropped (after the
//! stream has finished its replays). A launch on a stream captured by anything else (cudarc's
//! `begin_capture`) is refused.
//!
//! How a capture runs (all on the calling thread, whose state says which stream is oxide's):
//! a private non-blocking stream of the context starts capturing (thread-local mode), `record`
//! enqueues launches on it, the capture ends and the graph is instantiated. A kernel whose
//! module is not yet loaded in the context cannot load under capture (loading allocates and
//! synchronizes), so its launch returns `Err`, the capture is discarded, the module is loaded
//! on the caller's stream and `record` runs again.

use super::args::sealed::Sealed;
use super::gpu::Kernel;
use super::Error;
use crate::device::panic_record::Geometry;
use crate::LaunchConfig;
use cudarc::driver::sys::{self, CUstreamCaptureMode, CUstreamCaptureStatus};
use cudarc::driver::{result, CudaContext, CudaSlice, CudaStream, DevicePtrMut, DriverError};
use std::cell::RefCell;
use std::sync::Arc;

/// One kernel launch recorded into a graph: what a replay re-notes for panic reports.
type Recorded = (&'static str, Geometry);

/// The capture `Graph::capture` is running on this thread.
struct Capturing {
    /// The capturing stream's handle.
    stream: usize,
    /// `[start, end)` byte ranges of the graph's buffers: where captured launches may point.
    ranges: Vec<(u64, u64)>,
    launches: Vec<Recorded>,
    /// Kernels whose launch was refused because their module was not loaded yet.
    pending: Vec<&'static Kernel>,
}

thread_local! {
    static CAPTURING: RefCell<Option<Capturing>> = const { RefCell::new(None) };
}

fn with_capture<R>(f: impl FnOnce(&mut Option<Capturing>) -> R) -> R {
    CAPTURING.with(|c| f(&mut c.borrow_mut()))
}

/// Whether a launch is being captured, and by whom.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Capture {
    None,
    /// By `Graph::capture` on this thread.
    Oxide,
}

/// Whether `stream` is capturing. A capture oxide did not start is an `Err` naming `kernel`.
pub(crate) fn capture_kind(kernel: &'static str, stream: &CudaStream) -> Result<Capture, Error> {
    // SAFETY: the stream handle is valid while `stream` lives; the call only reads its state.
    let status = unsafe { result::stream::is_capturing(stream.cu_stream()) }.map_err(|source| Error::Driver {
        what: format!("asking whether the stream of kernel `{kernel}`'s launch is being captured"),
        source,
    })?;
    let ours = || with_capture(|c| c.as_ref().is_some_and(|c| c.stream == stream.cu_stream() as usize));
    let reason = match status {
        CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE => return Ok(Capture::None),
        CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE if ours() => return Ok(Capture::Oxide),
        CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE => {
            "the stream is being captured into a CUDA graph that oxide did not start (e.g. with cudarc's \
             `begin_capture`, or from another thread): such a graph keeps this launch's device addresses after \
             its buffers are freed, and replaying it then reads and writes freed memory. Capture typed launches \
             with `oxide_rt::host::Graph::capture`, which owns the buffers its graph uses"
        }
        _ => "the stream's capture was invalidated by an earlier operation that is not allowed under capture; end it",
    };
    Err(Error::InvalidLaunch { kernel, reason: reason.into() })
}

/// Under oxide's capture: remembers `kernel` for loading before the capture starts again, and
/// returns the error its launch gives meanwhile.
pub(crate) fn defer_load(kernel: &'static Kernel) -> Error {
    with_capture(|c| {
        if let Some(c) = c.as_mut() {
            c.pending.push(kernel);
        }
    });
    Error::InvalidLaunch {
        kernel: kernel.name(),
        reason: "its module is not loaded in this context yet, and loading it (an allocation and a \
                 synchronization) is not allowed during stream capture; `Graph::capture` loads it and records \
                 again when `record` returns (propagate launcher errors with `?`)"
            .into(),
    }
}

/// Notes a launch recorded into oxide's capture on this thread.
pub(crate) fn record_launch(kernel: &'static str, cfg: &LaunchConfig) {
    with_capture(|c| {
        if let Some(c) = c.as_mut() {
            c.launches.push((kernel, super::panic::geometry(cfg)));
        }
    });
}

/// Refuses a buffer argument of a captured launch that does not lie in the graph's buffers.
pub(crate) fn check_arg(
    kernel: &'static str,
    arg: &'static str,
    stream: usize,
    ptr: u64,
    bytes: usize,
) -> Result<(), Error> {
    with_capture(|c| match c.as_ref() {
        Some(c) if c.stream == stream && bytes > 0 && !contains(&c.ranges, ptr, bytes) => Err(not_owned(kernel, arg)),
        _ => Ok(()),
    })
}

fn contains(ranges: &[(u64, u64)], ptr: u64, bytes: usize) -> bool {
    let end = ptr.saturating_add(bytes as u64);
    ranges.iter().any(|&(start, stop)| start <= ptr && end <= stop)
}

fn not_owned(kernel: &'static str, arg: &'static str) -> Error {
    Error::InvalidLaunch {
        kernel,
        reason: format!(
            "argument `{arg}` is not memory of the graph's buffers: a graph keeps the device addresses it was \
             captured with, so every buffer a captured launch uses must be owned by the graph; pass it in \
             `Graph::capture`'s `buffers` and reach it through the `&mut B` that `record` gets"
        ),
    }
}

/// The device buffers a [`Graph`] owns: a `CudaSlice<T>`, or tuples (up to 8), arrays and
/// `Vec`s of them. Sealed: the graph trusts the addresses these report.
pub trait GraphBuffers: Sealed {
    /// Calls `f` with each buffer's device address and size in bytes, in a fixed order, as a
    /// write on `stream` (cudarc orders it after other streams' uses of the buffer, and later
    /// uses after it).
    #[doc(hidden)]
    fn visit(&mut self, stream: &CudaStream, f: &mut dyn FnMut(u64, usize));
}

impl<T> GraphBuffers for CudaSlice<T> {
    fn visit(&mut self, stream: &CudaStream, f: &mut dyn FnMut(u64, usize)) {
        let bytes = self.num_bytes();
        let (ptr, _record) = self.device_ptr_mut(stream);
        f(ptr, bytes);
    }
}

impl<S: GraphBuffers> GraphBuffers for Vec<S> {
    fn visit(&mut self, stream: &CudaStream, f: &mut dyn FnMut(u64, usize)) {
        f(self.len() as u64, 0);
        self.iter_mut().for_each(|b| b.visit(stream, f));
    }
}

impl<S: GraphBuffers, const N: usize> GraphBuffers for [S; N] {
    fn visit(&mut self, stream: &CudaStream, f: &mut dyn FnMut(u64, usize)) {
        self.iter_mut().for_each(|b| b.visit(stream, f));
    }
}

impl<S: GraphBuffers> Sealed for Vec<S> {}
impl<S: GraphBuffers, const N: usize> Sealed for [S; N] {}
impl Sealed for () {}

impl GraphBuffers for () {
    fn visit(&mut self, _: &CudaStream, _: &mut dyn FnMut(u64, usize)) {}
}

macro_rules! tuple_buffers {
    ($($name:ident),+) => {
        impl<$($name: GraphBuffers),+> Sealed for ($($name,)+) {}
        impl<$($name: GraphBuffers),+> GraphBuffers for ($($name,)+) {
            #[allow(non_snake_case)]
            fn visit(&mut self, stream: &CudaStream, f: &mut dyn FnMut(u64, usize)) {
                let ($($name,)+) = self;
                $($name.visit(stream, f);)+
            }
        }
    };
}
tuple_buffers!(A);
tuple_buffers!(A, B);
tuple_buffers!(A, B, C);
tuple_buffers!(A, B, C, D);
tuple_buffers!(A, B, C, D, E);
tuple_buffers!(A, B, C, D, E, F);
tuple_buffers!(A, B, C, D, E, F, G);
tuple_buffers!(A, B, C, D, E, F, G, H);

/// Each buffer's address and size, in `visit` order (a `Vec`'s length included, so a push or
/// a pop changes it too).
fn layout_of<B: GraphBuffers>(buffers: &mut B, stream: &CudaStream) -> Vec<(u64, usize)> {
    let mut out = Vec::new();
    buffers.visit(stream, &mut |ptr, bytes| out.push((ptr, bytes)));
    out
}

/// Each kernel and geometry once, in first-launch order.
fn distinct(launches: Vec<Recorded>) -> Vec<Recorded> {
    let mut out: Vec<Recorded> = Vec::new();
    for l in launches {
        if !out.contains(&l) {
            out.push(l);
        }
    }
    out
}

/// How many times `record` may be run while modules get loaded (each run loads at least one).
const MAX_RECORDS: usize = 16;

/// A CUDA graph of typed launches, captured once and replayed with [`launch`](Graph::launch).
///
/// The graph owns the device buffers its launches use (`B`: a `CudaSlice`, or a tuple, array
/// or `Vec` of them), so it can never be replayed on freed memory. Read results through
/// [`buffers`](Graph::buffers); write new inputs through [`buffers_mut`](Graph::buffers_mut).
///
/// ```no_run
/// # mod kernels { pub fn launch_scale(_: &std::sync::Arc<oxide_rt::cuda::CudaStream>, _: u32, _: u32, _: f32, _: &mut oxide_rt::cuda::CudaSlice<f32>) -> Result<(), oxide_rt::Error> { Ok(()) } }
/// use oxide_rt::host::{Gpu, Graph};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let gpu = Gpu::new(0)?;
/// let data = gpu.stream.clone_htod(&vec![1f32; 1024])?;
/// let mut graph = Graph::capture(&gpu.stream, (data,), |s, (data,)| {
///     for _ in 0..100 {
///         kernels::launch_scale(s, 4, 256, 1.01, data)?; // recorded, not run
///     }
///     Ok(())
/// })?;
/// graph.launch()?; // the 100 launches, as one
/// graph.synchronize()?; // a kernel panic in the graph comes back here
/// let result = gpu.stream.clone_dtoh(&graph.buffers().0)?;
/// # Ok(()) }
/// ```
pub struct Graph<B: GraphBuffers> {
    exec: Exec,
    /// The stream the graph is replayed on (the one passed to `capture`).
    stream: Arc<CudaStream>,
    /// The distinct kernels and geometries of its launches, re-noted at each replay so that a
    /// panic report names the kernel.
    launches: Vec<Recorded>,
    kernel_launches: usize,
    layout: Vec<(u64, usize)>,
    /// Set while (or after) the buffers were lent out mutably and not found unchanged.
    poisoned: bool,
    /// Dropped last: after the replays have finished (see `Drop`) and the graph is destroyed.
    buffers: B,
}

impl<B: GraphBuffers> Graph<B> {
    /// Captures the launches `record` makes on the stream it is given into a graph that replays
    /// on `stream`. `record` gets the capture stream and the buffers; every buffer argument of
    /// its typed launches must lie in `buffers` (else its launch is an `Err`), and it must
    /// leave `buffers` as it found them (same allocations). `record` may run more than once:
    /// the first capture of a kernel in a context discards the capture, loads the kernel's
    /// module and records again. Only oxide's launches are checked (raw pointers passed to an
    /// `unsafe` kernel are the caller's contract, as always): cudarc operations you
    /// enqueue on the capture stream (copies, memsets) are captured too, and keeping what they
    /// touch alive is up to you, as with cudarc's own `begin_capture`.
    pub fn capture<F>(stream: &Arc<CudaStream>, mut buffers: B, mut record: F) -> Result<Graph<B>, Error>
    where
        F: FnMut(&Arc<CudaStream>, &mut B) -> Result<(), Error>,
    {
        refuse_capturing(stream)?;
        let layout = layout_of(&mut buffers, stream);
        let ranges = layout.iter().filter(|r| r.1 > 0).map(|&(p, n)| (p, p.saturating_add(n as u64))).collect();
        let capture = CaptureStream::new(stream.context())?;
        let mut state =
            Capturing { stream: capture.stream.cu_stream() as usize, ranges, launches: vec![], pending: vec![] };
        for _ in 0..MAX_RECORDS {
            let session = Session::begin(&capture, state)?;
            let recorded = record(&capture.stream, &mut buffers);
            // `record` may keep a clone of the capture stream (or a buffer allocated on it),
            // which outlives the capture. That stream is non-blocking and cudarc does not know
            // it (no multi-stream event tracking), so work enqueued on it later would run
            // unordered with frees and copies on the context's other streams. Before the
            // capture ends (no window for another thread), put the context into cudarc's
            // multi-stream mode for good, which orders every buffer use on every stream.
            let kept = Arc::strong_count(&capture.stream) != 1;
            let tracked = if kept { track_all_streams(stream) } else { Ok(()) };
            let (graph, finished) = session.end();
            tracked?;
            if kept {
                // No second record: in multi-stream mode its launches would record the buffers'
                // events inside the capture, and waiting on those afterwards (the buffers' drop)
                // fails (H200: the next call on the context returned CUDA_ERROR_INVALID_VALUE).
                drop(graph);
                return Err(Error::Graph(
                    "`record` kept a clone of the capture stream it was given (or a buffer allocated on it) past the \
                     capture; launch only inside `record` and let the stream go (the context now tracks every \
                     stream's buffer uses, so later captures of it may be refused)"
                        .into(),
                ));
            }
            state = finished;
            if !state.pending.is_empty() {
                drop(graph);
                for kernel in std::mem::take(&mut state.pending) {
                    kernel.load(stream)?;
                }
                state.launches.clear();
                continue;
            }
            recorded?;
            let graph = graph?;
            if layout_of(&mut buffers, stream) != layout {
                return Err(Error::Graph(
                    "`record` replaced or resized one of the graph's buffers; it must launch on the buffers it is \
                     given and leave them in place"
                        .into(),
                ));
            }
            let exec = graph.instantiate()?;
            return Ok(Graph {
                exec,
                stream: stream.clone(),
                kernel_launches: state.launches.len(),
                launches: distinct(state.launches),
                layout,
                poisoned: false,
                buffers,
            });
        }
        Err(Error::Graph(format!(
            "`record` still launched kernels whose modules were not loaded after {MAX_RECORDS} attempts"
        )))
    }

    /// Replays the graph on its stream (asynchronously, like a launch). `Err` when the buffers
    /// were changed through [`buffers_mut`](Graph::buffers_mut), or when a kernel panicked in
    /// an earlier launch in the context (as typed launchers report it).
    pub fn launch(&mut self) -> Result<(), Error> {
        if self.poisoned {
            return Err(Error::Graph(
                "its buffers were replaced or resized through `buffers_mut` (or its guard was leaked), so the graph \
                 would use memory it no longer owns; capture a new graph"
                    .into(),
            ));
        }
        super::panic::note_launches(&self.stream, &self.launches)?;
        // Orders the replay after other streams' uses of the buffers (cudarc's event tracking)...
        self.buffers.visit(&self.stream, &mut |_, _| {});
        let driver = |source| {
            super::panic::explain(
                self.stream.context(),
                Error::Driver { what: "replaying a CUDA graph".into(), source },
            )
        };
        self.stream.context().bind_to_thread().map_err(driver)?;
        // SAFETY: the executable graph is alive (owned by `self.exec`) and belongs to the stream's context; every buffer its launches use is in `self.buffers`, which is alive and unchanged (checked above), and stays so until the stream has finished (`Drop` synchronizes first).
        unsafe { result::graph::launch(self.exec.exec, self.stream.cu_stream()) }.map_err(driver)?;
        // ...and later uses after it.
        self.buffers.visit(&self.stream, &mut |_, _| {});
        Ok(())
    }

    /// Waits for the stream; a kernel that panicked in a replay comes back as
    /// `Error::KernelPanic` naming the kernel and `file:line` (see [`synchronize`](super::synchronize)).
    pub fn synchronize(&self) -> Result<(), Error> {
        super::panic::synchronize(&self.stream)
    }

    /// The graph's buffers, to read results (`stream.clone_dtoh(&graph.buffers().0)`).
    pub fn buffers(&self) -> &B {
        &self.buffers
    }

    /// The graph's buffers, to write new inputs (`stream.memcpy_htod(&v, &mut bufs.0)`). The
    /// graph is unusable while the guard lives, and afterwards when a buffer was replaced or
    /// resized: [`launch`](Graph::launch) is then an `Err`.
    pub fn buffers_mut(&mut self) -> BuffersMut<'_, B> {
        self.poisoned = true;
        BuffersMut { graph: self }
    }

    /// The stream the graph replays on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// How many typed launches one replay makes.
    pub fn kernel_launches(&self) -> usize {
        self.kernel_launches
    }
}

impl<B: GraphBuffers> Drop for Graph<B> {
    fn drop(&mut self) {
        // The buffers are freed after this; replays still running must finish first. An error
        // here (a lost context) leaves nothing running that could use them.
        let _ = self.stream.synchronize();
    }
}

/// Mutable access to a [`Graph`]'s buffers; see [`Graph::buffers_mut`].
pub struct BuffersMut<'a, B: GraphBuffers> {
    graph: &'a mut Graph<B>,
}

impl<B: GraphBuffers> std::ops::Deref for BuffersMut<'_, B> {
    type Target = B;
    fn deref(&self) -> &B {
        &self.graph.buffers
    }
}

impl<B: GraphBuffers> std::ops::DerefMut for BuffersMut<'_, B> {
    fn deref_mut(&mut self) -> &mut B {
        &mut self.graph.buffers
    }
}

impl<B: GraphBuffers> Drop for BuffersMut<'_, B> {
    fn drop(&mut self) {
        let g = &mut *self.graph;
        g.poisoned = layout_of(&mut g.buffers, &g.stream) != g.layout;
    }
}

/// Puts `stream`'s context into cudarc's multi-stream mode for good (a forked stream that is
/// never dropped), so every later use of a buffer, on any stream of the context, waits for the
/// earlier ones through the buffer's events.
fn track_all_streams(stream: &Arc<CudaStream>) -> Result<(), Error> {
    let forked = stream.fork().map_err(|source| Error::Driver {
        what: "creating a stream that keeps the context in cudarc's multi-stream mode (a capture stream was kept)"
            .into(),
        source,
    })?;
    std::mem::forget(forked);
    Ok(())
}

/// Refuses to start a capture from a stream that is itself being captured.
fn refuse_capturing(stream: &CudaStream) -> Result<(), Error> {
    let status = stream.capture_status().map_err(|source| Error::Driver {
        what: "asking whether the stream passed to `Graph::capture` is being captured".into(),
        source,
    })?;
    if status != CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE {
        return Err(Error::Graph("the stream passed to `Graph::capture` is already being captured".into()));
    }
    Ok(())
}

/// A private non-blocking stream to capture on (the legacy default stream cannot be captured).
///
/// Created raw rather than with `ctx.new_stream()`, which would switch the whole context into
/// cudarc's multi-stream mode: then every buffer use waits on its events, and waiting on an
/// event recorded outside the capture is not allowed under capture.
struct CaptureStream {
    stream: Arc<CudaStream>,
    raw: sys::CUstream,
}

impl CaptureStream {
    fn new(ctx: &Arc<CudaContext>) -> Result<CaptureStream, Error> {
        let driver = |source| Error::Driver { what: "creating a stream to capture a CUDA graph on".into(), source };
        ctx.bind_to_thread().map_err(driver)?;
        let raw = result::stream::create(result::stream::StreamKind::NonBlocking).map_err(driver)?;
        // SAFETY: `raw` was just created in `ctx` (bound above); `Drop` destroys it only when no other reference to the wrapper exists.
        let stream = unsafe { ctx.wrap_borrowed_stream(raw) };
        Ok(CaptureStream { stream, raw })
    }
}

impl Drop for CaptureStream {
    fn drop(&mut self) {
        // `record` may have kept a clone of the stream; then it is never destroyed (a leak of
        // one stream, rather than a handle that dangles).
        if Arc::strong_count(&self.stream) == 1 && self.stream.context().bind_to_thread().is_ok() {
            // SAFETY: nothing else refers to the stream (the only wrapper is ours and does not destroy it), and its capture has ended.
            let _ = unsafe { result::stream::destroy(self.raw) };
        }
    }
}

/// One capture in progress on this thread: ends the capture and clears the thread's state
/// however `record` returns (a panic included).
struct Session<'a> {
    capture: &'a CaptureStream,
    ended: bool,
    /// The thread's capture state before this one (a `Graph::capture` inside `record`), put back
    /// at the end.
    outer: Option<Capturing>,
}

impl<'a> Session<'a> {
    fn begin(capture: &'a CaptureStream, state: Capturing) -> Result<Session<'a>, Error> {
        let mode = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
        capture
            .stream
            .begin_capture(mode)
            .map_err(|source| Error::Driver { what: "starting a stream capture".into(), source })?;
        let outer = with_capture(|c| c.replace(state));
        Ok(Session { capture, ended: false, outer })
    }

    /// Ends the capture: the captured graph (or why there is none) and the thread's state.
    fn end(mut self) -> (Result<Captured, Error>, Capturing) {
        self.ended = true;
        // This capture's state out, the one of a capture around it (if any) back in.
        let outer = self.outer.take();
        let state = with_capture(|c| std::mem::replace(c, outer)).unwrap_or(Capturing {
            stream: 0,
            ranges: vec![],
            launches: vec![],
            pending: vec![],
        });
        let ctx = self.capture.stream.context().clone();
        let graph = ctx
            .bind_to_thread()
            // SAFETY: the stream is capturing (begun in `begin`, on this thread as thread-local mode requires).
            .and_then(|_| unsafe { result::stream::end_capture(self.capture.raw) })
            .map_err(|source| Error::Driver { what: invalidated_hint(source), source })
            .and_then(|graph| match graph.is_null() {
                true => Err(Error::Graph("`record` enqueued nothing to capture".into())),
                false => Ok(Captured { graph, ctx }),
            });
        (graph, state)
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        if !self.ended {
            let outer = self.outer.take();
            with_capture(|c| *c = outer);
            // SAFETY: as in `end`; the graph of an abandoned capture is destroyed right away.
            if let Ok(graph) = unsafe { result::stream::end_capture(self.capture.raw) } {
                if !graph.is_null() {
                    // SAFETY: the graph was just returned to us and nothing else refers to it.
                    let _ = unsafe { result::graph::destroy(graph) };
                }
            }
        }
    }
}

fn invalidated_hint(source: DriverError) -> String {
    if source.0 == sys::CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED {
        "ending the stream capture: an operation in `record` is not allowed under capture and invalidated it \
         (a synchronization, an allocation, a copy to or from pageable host memory, or a wait on an event recorded \
         outside the capture: cudarc's multi-stream event tracking waits on buffers' events once the context has \
         a second stream)"
            .into()
    } else {
        "ending the stream capture".into()
    }
}

/// A captured, not yet instantiated graph.
struct Captured {
    graph: sys::CUgraph,
    ctx: Arc<CudaContext>,
}

impl Captured {
    fn instantiate(mut self) -> Result<Exec, Error> {
        let graph = std::mem::replace(&mut self.graph, std::ptr::null_mut());
        let ctx = self.ctx.clone();
        let exec = ctx
            .bind_to_thread()
            // SAFETY: `graph` is a valid graph just captured in this (bound) context.
            .and_then(|_| unsafe { result::graph::instantiate(graph, sys::CUgraphInstantiate_flags(0)) });
        let exec = Exec { graph, exec: exec.unwrap_or(std::ptr::null_mut()), ctx };
        if exec.exec.is_null() {
            return Err(Error::Graph("the driver could not instantiate the captured graph".into()));
        }
        Ok(exec)
    }
}

impl Drop for Captured {
    fn drop(&mut self) {
        if !self.graph.is_null() && self.ctx.bind_to_thread().is_ok() {
            // SAFETY: the graph is ours alone and was never instantiated.
            let _ = unsafe { result::graph::destroy(self.graph) };
        }
    }
}

/// An instantiated graph and the graph it came from.
struct Exec {
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
    ctx: Arc<CudaContext>,
}

// SAFETY: CUDA graph objects are not internally synchronized, so they must not be used from two threads at once; an `Exec` is used only through `&mut Graph` (`launch`) and on drop, which never overlap, and the context handle it keeps is thread-safe.
unsafe impl Send for Exec {}

impl Drop for Exec {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: both are ours alone; the owning `Graph` synchronized its stream first, so no replay is running.
            unsafe {
                let _ = result::graph::exec_destroy(self.exec);
                let _ = result::graph::destroy(self.graph);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capturing(stream: usize, ranges: Vec<(u64, u64)>) {
        with_capture(|c| *c = Some(Capturing { stream, ranges, launches: vec![], pending: vec![] }));
    }

    #[test]
    fn captured_arguments_must_lie_inside_the_graphs_buffers() {
        capturing(0x50, vec![(0x1000, 0x1400), (0x9000, 0x9010)]);
        assert!(check_arg("k", "x", 0x50, 0x1000, 0x400).is_ok(), "a whole buffer");
        assert!(check_arg("k", "x", 0x50, 0x1100, 0x10).is_ok(), "a view inside one");
        assert!(check_arg("k", "x", 0x50, 0x9000, 0x10).is_ok());
        let outside = check_arg("k", "y", 0x50, 0x2000, 4).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(outside.contains("argument `y` is not memory of the graph's buffers"), "{outside}");
        assert!(check_arg("k", "y", 0x50, 0x13f0, 0x20).is_err(), "running past the end of a buffer");
        assert!(check_arg("k", "y", 0x50, 0x1400, 0x10).is_err(), "right after a buffer");
        assert!(check_arg("k", "y", 0x50, 0x2000, 0).is_ok(), "empty arguments point at no memory of theirs");
        assert!(check_arg("k", "y", 0x60, 0x2000, 4).is_ok(), "another stream is not the capture");
        with_capture(|c| *c = None);
        assert!(check_arg("k", "y", 0x50, 0x2000, 4).is_ok(), "no capture on this thread");
    }

    #[test]
    fn a_graph_moves_to_another_thread_with_its_buffers() {
        fn send<T: Send>() {}
        send::<Graph<(CudaSlice<f32>, Vec<CudaSlice<u32>>)>>();
    }

    #[test]
    fn launches_are_recorded_only_under_a_capture() {
        record_launch("before", &LaunchConfig::new(1u32, 32u32));
        capturing(0x70, vec![]);
        record_launch("k", &LaunchConfig::new(4u32, 64u32));
        let state = with_capture(|c| c.take()).map(|c| c.launches).unwrap_or_default();
        assert_eq!(state.len(), 1);
        assert_eq!(state[0].0, "k");
        assert_eq!(state[0].1.grid, [4, 1, 1]);
        assert_eq!(state[0].1.block, [64, 1, 1]);
    }
}
