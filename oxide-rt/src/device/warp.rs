//! Warp-level operations (filled in by the device API work).

/// Which lane a shuffle reads from (PTX `shfl.sync.{idx,up,down,bfly}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShflMode {
    /// From lane `src` (within the `width`-lane segment).
    Idx,
    /// From lane `lane - delta` (unchanged below the segment start).
    Up,
    /// From lane `lane + delta` (unchanged past the segment end).
    Down,
    /// From lane `lane ^ mask`.
    Xor,
}
