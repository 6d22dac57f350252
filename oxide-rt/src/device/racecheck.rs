//! Shared-memory race detection of the CPU executor: the hazards of `compute-sanitizer
//! --tool racecheck`, found on the CPU.
//!
//! Every access through the shared-memory API (`SharedSlice::get`/`set`, their unchecked
//! twins, `SharedAtomic`) records, for each 4-byte word it touches, a stamp: the thread, which
//! bytes of the word, whether the access was atomic, the block's barrier epoch and its warp's
//! `sync_warp` count at that moment, and the source line. Per word the shadow keeps the last
//! write and up to two reads since it. Two accesses *conflict* when they touch a common byte,
//! different threads made them, at least one writes and not both are atomic; they are
//! *ordered* when a block barrier completed between them (the earlier epoch is smaller) or, for
//! two lanes of one warp, a `sync_warp` did. A conflict that is not ordered is a race:
//! read-after-write, write-after-read or write-after-write, reported with both threads and both
//! source lines.
//!
//! Only what the shadow remembers is compared (the last write, two reads per word), so a race
//! can go unreported (two threads writing different bytes of one word leave only the last
//! write), but every report is a real unordered pair of accesses to one byte. Accesses through
//! raw pointers (`as_ptr`) are not seen.
//!
//! The shadow also keeps which bytes of each word were ever written in the block, so a read of
//! a byte no thread of the block has written is reported too (shared memory starts with
//! whatever the previous block left: the value read is garbage). Atomic read-modify-writes
//! count as writes here: an atomic add to a never-written counter goes unreported.

use crate::device::cpu::Site;
pub(crate) use crate::device::shared::Access;
use crate::dim::Dim3;
use crate::host::CpuCheck;

impl Access {
    fn writes(self) -> bool {
        matches!(self, Access::Write | Access::AtomicWrite)
    }

    fn atomic(self) -> bool {
        matches!(self, Access::AtomicRead | Access::AtomicWrite)
    }
}

/// No thread: the stamp is empty.
const NOBODY: u16 = u16::MAX;

/// Bytes of shared memory one shadow cell covers.
const WORD: usize = 4;

/// One access as the shadow remembers it.
#[derive(Clone, Copy)]
struct Stamp {
    /// Linear index of the thread in its block, `NOBODY` for none.
    thread: u16,
    /// The thread's block: its rank in the cluster (another block reaches this memory through
    /// `cluster::map_shared`).
    block: u8,
    /// Cluster barriers completed when the access was made: the only order between threads of
    /// different blocks.
    cluster_epoch: u32,
    atomic: bool,
    /// Which bytes of the cell's word it touched (bit `i`: byte `i`).
    bytes: u8,
    epoch: u32,
    warp_syncs: u32,
    site: Option<Site>,
}

const EMPTY: Stamp =
    Stamp { thread: NOBODY, block: 0, cluster_epoch: 0, atomic: false, bytes: 0, epoch: 0, warp_syncs: 0, site: None };

#[derive(Clone, Copy)]
struct Shadow {
    write: Stamp,
    reads: [Stamp; 2],
    /// The bytes of the word written so far in this block (bit `i`: byte `i`).
    written: u8,
}

const CLEAN: Shadow = Shadow { write: EMPTY, reads: [EMPTY; 2], written: 0 };

/// One shared allocation of a block (a `shared_array!` or the dynamic window) and its shadow.
struct Region {
    start: usize,
    len: usize,
    /// Where the array is declared; `None` for the dynamic shared memory.
    declared: Option<Site>,
    /// One per 4-byte word, made on the first checked access.
    shadow: Vec<Shadow>,
}

/// The accessing thread, as the executor knows it.
pub(crate) struct Accessor {
    pub(crate) thread: u32,
    /// The thread's block's rank in its cluster.
    pub(crate) block: u32,
    pub(crate) block_dim: Dim3,
    pub(crate) epoch: u32,
    pub(crate) cluster_epoch: u32,
    /// `sync_warp`s completed so far by the thread's warp.
    pub(crate) warp_syncs: u32,
}

/// The shadows of one block's shared memory.
#[derive(Default)]
pub(crate) struct Races {
    regions: Vec<Region>,
}

impl Races {
    /// Registers an allocation of `len` bytes at `start`, declared at `declared`.
    pub(crate) fn add(&mut self, start: *const u8, len: usize, declared: Option<Site>) {
        self.regions.push(Region { start: start as usize, len, declared, shadow: Vec::new() });
    }

    /// Checks and records an access of `bytes` bytes at `at`; `Err` with the report of a race.
    pub(crate) fn access(
        &mut self,
        at: *const u8,
        bytes: usize,
        access: Access,
        site: Site,
        by: &Accessor,
    ) -> Result<(), (CpuCheck, String)> {
        let addr = at as usize;
        let Some(region) = self.regions.iter_mut().find(|r| addr >= r.start && addr - r.start < r.len) else {
            return Ok(()); // not shared memory this block knows (cannot happen through the API)
        };
        if region.shadow.is_empty() {
            region.shadow = fresh_shadow(region.len.div_ceil(WORD));
        }
        let offset = addr - region.start;
        let end = (offset + bytes).min(region.len);
        let mut now = Stamp {
            thread: u16::try_from(by.thread).unwrap_or(NOBODY - 1),
            block: u8::try_from(by.block).unwrap_or(u8::MAX),
            cluster_epoch: by.cluster_epoch,
            atomic: access.atomic(),
            bytes: 0,
            epoch: by.epoch,
            warp_syncs: by.warp_syncs,
            site: Some(site),
        };
        for word in offset / WORD..end.div_ceil(WORD) {
            // The bytes of this word the access touches.
            let (lo, hi) = (offset.max(word * WORD) - word * WORD, end.min(word * WORD + WORD) - word * WORD);
            now.bytes = ((1u16 << hi) - (1u16 << lo)) as u8;
            let cell = &mut region.shadow[word];
            let conflict = |earlier: &Stamp| {
                earlier.thread != NOBODY
                    && earlier.bytes & now.bytes != 0
                    && (earlier.thread != now.thread || earlier.block != now.block)
                    && !(earlier.atomic && now.atomic)
                    && !ordered(earlier, &now)
            };
            if conflict(&cell.write) {
                let kind = if access.writes() { "write-after-write" } else { "read-after-write" };
                let (earlier, verb) = (cell.write, "wrote");
                return Err(report(kind, region, word, &earlier, verb, &now, access, by.block_dim));
            }
            if access.writes() {
                if let Some(read) = cell.reads.iter().find(|r| conflict(r)) {
                    let read = *read;
                    return Err(report("write-after-read", region, word, &read, "read", &now, access, by.block_dim));
                }
                *cell = Shadow { write: now, reads: [EMPTY; 2], written: cell.written | now.bytes };
            } else {
                let missing = now.bytes & !cell.written;
                if missing != 0 {
                    return Err(never_written(region, word, missing, &now, by.block_dim));
                }
                // Reads before the current epoch are ordered before every later access: forget
                // them. Keep this thread's latest read and one of another thread.
                for r in &mut cell.reads {
                    if r.thread != NOBODY && barrier_between(r, &now) {
                        *r = EMPTY;
                    }
                }
                // When neither slot fits, two other threads' reads are remembered already.
                let mine = |r: &Stamp| (r.thread == now.thread && r.block == now.block) || r.thread == NOBODY;
                if let Some(slot) = cell.reads.iter().position(mine) {
                    cell.reads[slot] = now;
                }
            }
        }
        Ok(())
    }
}

/// Whether a barrier completed between `earlier` and `now` that both threads took: a block
/// barrier (or a cluster barrier, which counts as one) for two threads of one block, a cluster
/// barrier for threads of two blocks.
fn barrier_between(earlier: &Stamp, now: &Stamp) -> bool {
    match earlier.block == now.block {
        true => earlier.epoch != now.epoch,
        false => earlier.cluster_epoch != now.cluster_epoch,
    }
}

/// Whether `earlier` happens before `now`: a barrier between them, or a `sync_warp` of their
/// warp.
fn ordered(earlier: &Stamp, now: &Stamp) -> bool {
    barrier_between(earlier, now)
        || (earlier.block == now.block
            && earlier.thread / 32 == now.thread / 32
            && earlier.warp_syncs != now.warp_syncs)
}

impl Drop for Races {
    fn drop(&mut self) {
        SPARE.with(|spare| {
            let mut spare = spare.borrow_mut();
            for region in self.regions.drain(..) {
                if !region.shadow.is_empty() && spare.len() < SPARE_SHADOWS {
                    spare.push(region.shadow);
                }
            }
        });
    }
}

/// Shadows kept per OS thread for the next blocks: the next block of a launch has the same
/// arrays, and clearing a shadow costs less than mapping fresh pages for it.
const SPARE_SHADOWS: usize = 16;

thread_local! {
    static SPARE: std::cell::RefCell<Vec<Vec<Shadow>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A clean shadow of `len` bytes, reusing a spare one of that size when there is one.
fn fresh_shadow(len: usize) -> Vec<Shadow> {
    let reused = SPARE.with(|spare| {
        let mut spare = spare.borrow_mut();
        let i = spare.iter().position(|s| s.len() == len)?;
        Some(spare.swap_remove(i))
    });
    match reused {
        Some(mut shadow) => {
            shadow.fill(CLEAN);
            shadow
        }
        None => vec![CLEAN; len],
    }
}

#[allow(clippy::too_many_arguments)]
fn report(
    kind: &str,
    region: &Region,
    word: usize,
    earlier: &Stamp,
    verb: &str,
    now: &Stamp,
    access: Access,
    block: Dim3,
) -> (CpuCheck, String) {
    let what = match region.declared {
        Some(site) => format!("the shared array declared at {site}"),
        None => "the dynamic shared memory".to_string(),
    };
    let how = |atomic: bool| if atomic { " atomically" } else { "" };
    let site = |s: &Stamp| s.site.map_or_else(|| "an unknown line".to_string(), |l| l.to_string());
    let now_verb = if access.writes() { "writes" } else { "reads" };
    let byte = word * WORD + (earlier.bytes & now.bytes).trailing_zeros() as usize;
    let ranks = earlier.block != 0 || now.block != 0;
    // Two blocks of a cluster (through `map_shared`) are ordered only by a cluster barrier.
    let (memory, barrier) = match earlier.block != now.block {
        true => (
            " (distributed shared memory)",
            format!("cluster barrier between them (cluster barrier epoch {})", now.cluster_epoch),
        ),
        false => ("", format!("sync_threads between them (barrier epoch {})", now.epoch)),
    };
    let warp = earlier.block == now.block && earlier.thread / 32 == now.thread / 32;
    let report = format!(
        "{kind} hazard on byte {byte} of {what}{memory}: {} {verb} it{} at {}, then {} {now_verb} it{} at {}, with no \
         {barrier}{}",
        thread(block, earlier, ranks),
        how(earlier.atomic),
        site(earlier),
        thread(block, now, ranks),
        how(now.atomic),
        site(now),
        if warp { " nor a sync_warp of their warp" } else { "" },
    );
    (CpuCheck::SharedRace, report)
}

/// The report of a read of bytes (`missing`, of word `word`) that no thread of the block wrote.
fn never_written(region: &Region, word: usize, missing: u8, now: &Stamp, block: Dim3) -> (CpuCheck, String) {
    let what = match region.declared {
        Some(site) => format!("the shared array declared at {site}"),
        None => "the dynamic shared memory".to_string(),
    };
    let byte = word * WORD + missing.trailing_zeros() as usize;
    let at = now.site.map_or_else(|| "an unknown line".to_string(), |l| l.to_string());
    let report = format!(
        "read of byte {byte} of {what}, which no thread of this block has written: {} reads it at {at}; shared \
         memory starts with garbage in every block, so write each element (and sync_threads) before reading it",
        thread(block, now, now.block != 0),
    );
    (CpuCheck::UninitShared, report)
}

fn thread(block: Dim3, s: &Stamp, rank: bool) -> String {
    let (i, x, y) = (s.thread as u32, block.x.max(1), block.y.max(1));
    let of = if rank { format!(" of cluster rank {}", s.block) } else { String::new() };
    format!("thread ({},{},{}){of}", i % x, i / x % y, i / (x * y))
}
