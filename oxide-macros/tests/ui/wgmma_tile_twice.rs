// A persistent wgmma tile borrows its output: a thread cannot hold two tiles at once, nor write
// a tile after `store` has consumed it (its quad wrote the tile's elements for it).
use oxide_rt::device::wgmma::*;
use oxide_rt::device::*;
use oxide_rt::Bf16;

#[kernel(block(384))]
pub fn two_tiles(mut c: DisjointPersistentWgmmaTiles<Bf16, 128, 64, 1, 1>) {
    let first = c.next_tile();
    let second = c.next_tile();
    if let (Some(mut a), Some(_)) = (first, second) {
        if let Some(v) = a.get_mut(0) {
            *v = Bf16::from_f32(1.0);
        }
    }
}

#[kernel(block(384))]
pub fn after_store(mut c: DisjointPersistentWgmmaTiles<Bf16, 128, 64, 1, 1>) {
    if let Some(mut t) = c.next_tile() {
        t.store(&WgAcc::<M64N64K16>::zero());
        if let Some(v) = t.get_mut(0) {
            *v = Bf16::from_f32(1.0);
        }
    }
}

fn main() {}
