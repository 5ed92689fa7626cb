//! A volume file's content as the mount holds it: a run of pieces from offset 0 to the size,
//! each a stored chunk, a hole, or bytes written since they were last cut into chunks. A write
//! that covers part of a chunk turns that chunk back into written bytes (read from the store),
//! so that cutting them again re-cuts only the region around the change; chunks a write covers
//! whole are simply dropped; holes cost nothing until a commit names them as zero chunks.

use std::ops::Bound;
use std::sync::Arc;

use dedup_store::chunker::Chunker;
use dedup_store::Id;

pub use super::piece_map::Piece;
use super::piece_map::PieceMap;
use super::seal_pool::FileSealing;

/// How far before a file's end a hole may be one that writes still in flight will fill (the
/// kernel has up to 64 requests of 1 MiB in flight, volume/fs/mod.rs, but sends a file's pages
/// nearly in order): written bytes beside such a hole wait to be cut, at most this many.
const OUT_OF_ORDER: u64 = 16 << 20;

/// How far from where the previous read of a file ended a read may start and still be taken
/// for one going on in order: the kernel has several read-ahead requests of a file in flight on
/// two threads, so they may come a little out of order (it reads ahead 4 MiB at most).
const IN_ORDER_SLACK: u64 = 8 << 20;

/// Fetches a stored chunk's bytes.
pub type Fetch<'a, E> = &'a mut dyn FnMut(&Id) -> Result<std::sync::Arc<Vec<u8>>, E>;

/// A file's content.
#[derive(Debug, Clone, Default)]
pub struct Content {
    /// Pieces by their start offset; together they cover `0..size` without gaps.
    pieces: PieceMap,
    size: u64,
    fresh: u64,
    /// Where the previous read ended ([`Content::read_in_order`]).
    read_end: u64,
    /// Its chunks on their way through the sealing threads, from the first queued until a
    /// `close` found them all stored.
    pub sealing: Option<Arc<FileSealing>>,
}

impl Content {
    /// The content of a stored file: its chunks, each with its length.
    #[cfg(test)]
    pub fn from_chunks(chunks: impl IntoIterator<Item = (Id, u64)>) -> Content {
        Content::from_chunks_and_holes(chunks, |_| false)
    }

    /// [`Content::from_chunks`], where each run of chunks for which `is_hole` holds (the zero
    /// chunks a commit lists for a hole) is a hole again: it takes no space, and one piece
    /// rather than one per chunk (a 16 TiB hole is two million chunks).
    pub fn from_chunks_and_holes(
        chunks: impl IntoIterator<Item = (Id, u64)>,
        is_hole: impl Fn(&Id) -> bool,
    ) -> Content {
        let mut content = Content::default();
        let mut hole_from = None;
        for (id, len) in chunks {
            if len == 0 {
                continue;
            }
            if is_hole(&id) {
                hole_from.get_or_insert(content.size);
            } else {
                if let Some(at) = hole_from.take() {
                    content.pieces.insert(at, Piece::Hole { len: content.size - at });
                }
                content.pieces.insert(content.size, Piece::Stored { id, len });
            }
            content.size += len;
        }
        if let Some(at) = hole_from {
            content.pieces.insert(at, Piece::Hole { len: content.size - at });
        }
        content.pieces.shrink();
        content
    }

    /// The size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Bytes written and not yet cut into chunks.
    pub fn fresh_bytes(&self) -> u64 {
        self.fresh
    }

    /// Bytes that take space: not holes.
    pub fn allocated(&self) -> u64 {
        self.pieces.values().filter(|p| !matches!(p, Piece::Hole { .. })).map(Piece::len).sum()
    }

    /// The pieces in order, with their start.
    pub fn pieces(&self) -> impl Iterator<Item = (u64, &Piece)> {
        self.pieces.iter().map(|(at, piece)| (*at, piece))
    }

    /// The piece holding `offset` (< size), with its start.
    fn piece_at(&self, offset: u64) -> Option<(u64, &Piece)> {
        self.pieces.range(..=offset).next_back().map(|(at, piece)| (*at, piece))
    }

    fn insert(&mut self, at: u64, piece: Piece) {
        if let Piece::Fresh(bytes) = &piece {
            self.fresh += bytes.len() as u64;
        }
        self.pieces.insert(at, piece);
    }

    fn remove(&mut self, at: u64) -> Option<Piece> {
        let piece = self.pieces.remove(&at)?;
        if let Piece::Fresh(bytes) = &piece {
            self.fresh -= bytes.len() as u64;
        }
        Some(piece)
    }

    /// Makes `offset` the start of a piece (a stored chunk split there becomes written bytes).
    fn split_at<E>(&mut self, offset: u64, fetch: Fetch<'_, E>) -> Result<(), E> {
        let Some((at, piece)) = self.piece_at(offset) else { return Ok(()) };
        if at == offset || offset >= at + piece.len() {
            return Ok(());
        }
        let piece = self.remove(at).expect("the piece was just found");
        let cut = usize::try_from(offset - at).expect("a piece fits in memory");
        let (head, tail) = match piece {
            Piece::Hole { len } => {
                (Piece::Hole { len: offset - at }, Piece::Hole { len: len - (offset - at) })
            }
            Piece::Fresh(mut bytes) => {
                let tail = bytes.split_off(cut);
                (Piece::Fresh(bytes), Piece::Fresh(tail))
            }
            Piece::Stored { id, len } => match fetch(&id) {
                Ok(bytes) => {
                    (Piece::Fresh(bytes[..cut].to_vec()), Piece::Fresh(bytes[cut..].to_vec()))
                }
                Err(err) => {
                    self.insert(at, Piece::Stored { id, len });
                    return Err(err);
                }
            },
        };
        self.insert(at, head);
        self.insert(offset, tail);
        Ok(())
    }

    /// Removes the pieces within `from..to` (both piece boundaries).
    fn remove_range(&mut self, from: u64, to: u64) {
        let starts: Vec<u64> = self.pieces.range(from..to).map(|(at, _)| *at).collect();
        for at in starts {
            self.remove(at);
        }
    }

    /// Joins the written bytes at `at` with written neighbours, so that a run of small writes
    /// is one piece.
    fn coalesce(&mut self, at: u64) {
        let mut at = at;
        if let Some((&prev, Piece::Fresh(_))) = self.pieces.range(..at).next_back() {
            if matches!(self.pieces.get(&at), Some(Piece::Fresh(_))) {
                let Some(Piece::Fresh(tail)) = self.remove(at) else { unreachable!() };
                let Some(Piece::Fresh(mut head)) = self.remove(prev) else { unreachable!() };
                head.extend_from_slice(&tail);
                self.insert(prev, Piece::Fresh(head));
                at = prev;
            }
        }
        let Some(len) = self.pieces.get(&at).map(Piece::len) else { return };
        let next = at + len;
        if matches!(
            (self.pieces.get(&at), self.pieces.get(&next)),
            (Some(Piece::Fresh(_)), Some(Piece::Fresh(_)))
        ) {
            let Some(Piece::Fresh(tail)) = self.remove(next) else { unreachable!() };
            let Some(Piece::Fresh(mut head)) = self.remove(at) else { unreachable!() };
            head.extend_from_slice(&tail);
            self.insert(at, Piece::Fresh(head));
        }
    }

    /// Writes `data` at `offset` (past the end: a hole between).
    pub fn write<E>(&mut self, offset: u64, data: &[u8], fetch: Fetch<'_, E>) -> Result<(), E> {
        if data.is_empty() {
            return Ok(());
        }
        let end = offset + data.len() as u64;
        if offset == self.size {
            // Appending to written bytes (a file written in order) grows them in place rather
            // than as a piece of its own that is then joined to them.
            if let Some((_, Piece::Fresh(bytes))) = self.pieces.iter_mut().next_back() {
                bytes.extend_from_slice(data);
                self.fresh += data.len() as u64;
                self.size = end;
                return Ok(());
            }
        }
        if offset > self.size {
            self.set_size(offset, fetch)?;
        }
        self.split_at(offset, fetch)?;
        self.split_at(end, fetch)?;
        self.remove_range(offset, end);
        self.insert(offset, Piece::Fresh(data.to_vec()));
        self.size = self.size.max(end);
        self.coalesce(offset);
        Ok(())
    }

    /// Truncates or extends (with a hole) to `size`.
    pub fn set_size<E>(&mut self, size: u64, fetch: Fetch<'_, E>) -> Result<(), E> {
        if size < self.size {
            self.split_at(size, fetch)?;
            self.remove_range(size, u64::MAX);
        } else if size > self.size {
            let grow = size - self.size;
            match self.pieces.range(..self.size).next_back() {
                Some((&at, Piece::Hole { len })) => {
                    let len = *len;
                    self.pieces.insert(at, Piece::Hole { len: len + grow });
                }
                _ => self.insert(self.size, Piece::Hole { len: grow }),
            }
        }
        self.size = size;
        Ok(())
    }

    /// Makes `offset..offset + len` (within the size) a hole.
    pub fn punch<E>(&mut self, offset: u64, len: u64, fetch: Fetch<'_, E>) -> Result<(), E> {
        let end = offset.saturating_add(len).min(self.size);
        if offset >= end {
            return Ok(());
        }
        self.split_at(offset, fetch)?;
        self.split_at(end, fetch)?;
        self.remove_range(offset, end);
        self.insert(offset, Piece::Hole { len: end - offset });
        Ok(())
    }

    /// Whether a read of `offset..end` goes on from the previous one (or starts at the file's
    /// beginning), so that the chunks after it are worth opening ahead; notes where it ends.
    pub fn read_in_order(&mut self, offset: u64, end: u64) -> bool {
        let in_order = offset == 0 || offset.abs_diff(self.read_end) <= IN_ORDER_SLACK;
        self.read_end = end;
        in_order
    }

    /// The stored chunks of the bytes `from..from + window`, in order.
    pub fn stored_within(&self, from: u64, window: u64) -> Vec<Id> {
        let first = self.piece_at(from).map_or(from, |(at, _)| at);
        let pieces = self.pieces.range(first..from.saturating_add(window));
        pieces
            .filter_map(|(_, piece)| match piece {
                Piece::Stored { id, .. } => Some(*id),
                _ => None,
            })
            .collect()
    }

    /// The stored chunk holding every byte of `offset..offset + len` that is within the size,
    /// with where that range starts in the chunk and its length: such a read is answered from
    /// the opened chunk itself rather than copied out of it.
    pub fn stored_span(&self, offset: u64, len: u64) -> Option<(Id, u64, u64)> {
        let end = offset.saturating_add(len).min(self.size);
        if offset >= end {
            return None;
        }
        match self.piece_at(offset)? {
            (at, Piece::Stored { id, len }) if end <= at + len => {
                Some((*id, offset - at, end - offset))
            }
            _ => None,
        }
    }

    /// Appends to `out` up to `len` bytes from `offset`; returns how many (fewer at the end).
    /// Appending rather than filling a buffer spares writing every byte twice (zeroing it,
    /// then the bytes).
    pub fn read<E>(
        &self,
        offset: u64,
        len: u64,
        out: &mut Vec<u8>,
        fetch: Fetch<'_, E>,
    ) -> Result<usize, E> {
        let end = offset.saturating_add(len).min(self.size);
        if offset >= end {
            return Ok(0);
        }
        let start = out.len();
        out.reserve((end - offset) as usize);
        let first = self.piece_at(offset).map_or(0, |(at, _)| at);
        let range = self.pieces.range((Bound::Included(first), Bound::Excluded(end)));
        for (&at, piece) in range {
            let from = offset.max(at);
            let to = end.min(at + piece.len());
            let src = (from - at) as usize..(to - at) as usize;
            match piece {
                Piece::Hole { .. } => out.resize(out.len() + src.len(), 0),
                Piece::Fresh(bytes) => out.extend_from_slice(&bytes[src]),
                Piece::Stored { id, .. } => {
                    let chunk = fetch(id).inspect_err(|_| out.truncate(start))?;
                    out.extend_from_slice(&chunk[src]);
                }
            }
        }
        Ok((end - offset) as usize)
    }

    /// Cuts written bytes into chunks and stores them with `store`. With `all`, every written
    /// byte; otherwise the bytes at the end of the file stay written until the chunker has seen
    /// enough to place the cut, so that a file written in order is cut as a backup would cut
    /// it. A failure leaves the piece it was cutting as it was (the bytes stay in memory).
    pub fn settle<E>(
        &mut self,
        chunker: &Chunker,
        all: bool,
        store: &mut dyn FnMut(&[u8]) -> Result<Id, E>,
    ) -> Result<(), E> {
        let fresh: Vec<u64> = self
            .pieces
            .iter()
            .filter(|(_, piece)| matches!(piece, Piece::Fresh(_)))
            .map(|(at, _)| *at)
            .collect();
        for at in fresh {
            let Some(Piece::Fresh(bytes)) = self.pieces.get(&at) else { continue };
            let end = at + bytes.len() as u64;
            // After such a hole the bytes do not start where the chunker would start: they wait
            // for the hole to fill (or to fall behind the window, a real hole).
            let after_hole =
                matches!(self.pieces.range(..at).next_back(), Some((_, Piece::Hole { .. })))
                    && self.size - at <= OUT_OF_ORDER;
            if !all && after_hole {
                continue;
            }
            // At the end, or before a hole near it: the kernel sends a file's cached pages back
            // several at once, so a file written in order can have a hole for a moment where a
            // later page came first. Its bytes wait for the chunker to decide, as at the end, so
            // that the file is cut as the same bytes written in order are.
            let at_end = end == self.size
                || (matches!(self.pieces.get(&end), Some(Piece::Hole { .. }))
                    && self.size - end <= OUT_OF_ORDER);
            let mut cuts = Vec::new();
            let mut pos = 0;
            while pos < bytes.len() {
                let rest = &bytes[pos..];
                let len = if all || !at_end || rest.len() >= chunker.max_size() {
                    chunker.cut(rest)
                } else {
                    match chunker.cut_if_decided(rest) {
                        Some(len) => len,
                        None => break,
                    }
                };
                cuts.push((store(&rest[..len])?, len as u64));
                pos += len;
            }
            if cuts.is_empty() {
                continue;
            }
            let Some(Piece::Fresh(mut tail)) = self.remove(at) else { unreachable!() };
            // The bytes left keep the buffer the written bytes grew in, so that the writes
            // after them append into memory already faulted in rather than a new buffer.
            tail.drain(..pos);
            let mut start = at;
            for (id, len) in cuts {
                self.insert(start, Piece::Stored { id, len });
                start += len;
            }
            if !tail.is_empty() {
                self.insert(start, Piece::Fresh(tail));
            }
        }
        // A settled file (every small file once closed) keeps room for its pieces only; one
        // still being written keeps its room to grow.
        if self.fresh == 0 {
            self.pieces.shrink();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Arc;

    use dedup_store::format::ChunkerParams;

    use super::*;

    struct Store {
        blobs: HashMap<Id, Arc<Vec<u8>>>,
    }

    impl Store {
        fn put(&mut self, bytes: &[u8]) -> Result<Id, ()> {
            let id = Id::of_file(bytes);
            self.blobs.insert(id, Arc::new(bytes.to_vec()));
            Ok(id)
        }
    }

    fn read_all(content: &Content, store: &Store) -> Vec<u8> {
        let mut out = b"before".to_vec();
        let mut fetch = |id: &Id| store.blobs.get(id).cloned().ok_or(());
        let n = content.read(0, content.size() + 10, &mut out, &mut fetch).unwrap();
        assert_eq!(n as u64, content.size());
        assert_eq!(out.drain(..6).as_slice(), b"before", "appended to what was there");
        out
    }

    fn chunker() -> Chunker {
        Chunker::new(ChunkerParams::FastCdc { min: 64, avg: 256, max: 1024 }, &[7; 32])
    }

    /// Random writes, truncates and holes against a plain vector, settled now and then.
    #[test]
    fn random_operations_read_back_as_a_plain_vector_would() {
        let chunker = chunker();
        let mut store = Store { blobs: HashMap::new() };
        let mut content = Content::default();
        let mut model: Vec<u8> = Vec::new();
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for step in 0..2000 {
            let op = next() % 10;
            let offset = next() % 6000;
            let len = (next() % 1500) as usize;
            let blobs = store.blobs.clone();
            let mut fetch = |id: &Id| blobs.get(id).cloned().ok_or(());
            match op {
                0..=5 => {
                    let byte = (next() % 4) as u8;
                    let data: Vec<u8> =
                        (0..len).map(|i| byte.wrapping_add((i / 300) as u8)).collect();
                    content.write(offset, &data, &mut fetch).unwrap();
                    let end = offset as usize + len;
                    if len > 0 {
                        if model.len() < end {
                            model.resize(end, 0);
                        }
                        model[offset as usize..end].copy_from_slice(&data);
                    }
                }
                6 => {
                    content.set_size(offset, &mut fetch).unwrap();
                    model.resize(offset as usize, 0);
                }
                7 => {
                    content.punch(offset, len as u64, &mut fetch).unwrap();
                    let end = (offset as usize + len).min(model.len());
                    if (offset as usize) < end {
                        model[offset as usize..end].fill(0);
                    }
                }
                _ => {
                    let all = next() % 2 == 0;
                    content.settle(&chunker, all, &mut |b| store.put(b)).unwrap();
                    if all {
                        assert_eq!(content.fresh_bytes(), 0, "step {step}");
                    }
                }
            }
            assert_eq!(content.size(), model.len() as u64, "step {step}");
            let mut covered = 0;
            for (at, piece) in content.pieces() {
                assert_eq!(at, covered, "a gap or overlap at step {step}");
                covered += piece.len();
            }
            assert_eq!(covered, content.size());
            assert_eq!(read_all(&content, &store), model, "step {step}");
            let (from, len) = (next() % 6000, next() % 1500);
            if let Some((id, at, n)) = content.stored_span(from, len) {
                let chunk = &store.blobs[&id];
                let (at, n, from) = (at as usize, n as usize, from as usize);
                assert_eq!(chunk[at..at + n], model[from..from + n], "step {step}");
                assert_eq!(n, (model.len() - from).min(len as usize), "step {step}");
            }
        }
    }

    #[test]
    fn a_file_written_in_order_is_cut_as_a_whole_stream_would_be() {
        let chunker = chunker();
        let mut store = Store { blobs: HashMap::new() };
        let data: Vec<u8> =
            (0..20_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        let mut content = Content::default();
        for (n, part) in data.chunks(700).enumerate() {
            let mut fetch = |_: &Id| Err(());
            content.write((n * 700) as u64, part, &mut fetch).unwrap();
            content.settle(&chunker, false, &mut |b| store.put(b)).unwrap();
        }
        content.settle(&chunker, true, &mut |b| store.put(b)).unwrap();
        let lens: Vec<u64> = content.pieces().map(|(_, p)| p.len()).collect();
        assert_eq!(lens, cut_whole(&chunker, &data));
    }

    #[test]
    fn bytes_left_after_a_cut_keep_the_buffer_they_were_written_into() {
        let chunker = chunker();
        let mut store = Store { blobs: HashMap::new() };
        let data: Vec<u8> =
            (0..20_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        let mut content = Content::default();
        let mut fetch = |_: &Id| Err(());
        content.write(0, &data, &mut fetch).unwrap();
        let capacity = |content: &Content| match content.pieces().last() {
            Some((_, Piece::Fresh(bytes))) => (bytes.len(), bytes.capacity()),
            other => panic!("written bytes at the end, not {other:?}"),
        };
        let (_, before) = capacity(&content);
        content.settle(&chunker, false, &mut |b| store.put(b)).unwrap();
        let (left, after) = capacity(&content);
        assert!(left < data.len() && after == before, "{left} bytes left in {after} of {before}");
        // The writes after them append into the same memory.
        content.write(data.len() as u64, &data[..1000], &mut fetch).unwrap();
        assert_eq!(capacity(&content).1, before);
    }

    /// The chunk lengths `chunker` cuts `data` into when it sees it whole and in order.
    fn cut_whole(chunker: &Chunker, data: &[u8]) -> Vec<u64> {
        let mut lens = Vec::new();
        let mut rest = data;
        while !rest.is_empty() {
            let n = chunker.cut(rest);
            lens.push(n as u64);
            rest = &rest[n..];
        }
        lens
    }

    #[test]
    fn a_file_written_out_of_order_near_its_end_is_cut_as_in_order() {
        let chunker = chunker();
        let mut store = Store { blobs: HashMap::new() };
        let data: Vec<u8> =
            (0..20_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 9) as u8).collect();
        let mut content = Content::default();
        let mut none = |_: &Id| Err(());
        // Pairs of 700-byte parts, the second of each pair written first (as writeback may).
        let parts: Vec<&[u8]> = data.chunks(700).collect();
        for pair in (0..parts.len()).collect::<Vec<_>>().chunks(2) {
            for &n in pair.iter().rev() {
                content.write((n * 700) as u64, parts[n], &mut none).unwrap();
                content.settle(&chunker, false, &mut |b| store.put(b)).unwrap();
            }
        }
        content.settle(&chunker, true, &mut |b| store.put(b)).unwrap();
        let lens: Vec<u64> = content.pieces().map(|(_, p)| p.len()).collect();
        assert_eq!(lens, cut_whole(&chunker, &data));
        assert_eq!(read_all(&content, &store), data);
    }

    #[test]
    fn a_small_overwrite_recuts_only_the_chunk_it_touches() {
        let chunker = chunker();
        let mut store = Store { blobs: HashMap::new() };
        let data: Vec<u8> =
            (0..20_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8).collect();
        let mut content = Content::default();
        let mut none = |_: &Id| Err(());
        content.write(0, &data, &mut none).unwrap();
        content.settle(&chunker, true, &mut |b| store.put(b)).unwrap();
        let before: Vec<(u64, Piece)> = content.pieces().map(|(a, p)| (a, p.clone())).collect();
        let blobs = store.blobs.clone();
        let mut fetch = |id: &Id| blobs.get(id).cloned().ok_or(());
        content.write(10_000, b"changed", &mut fetch).unwrap();
        let mut new = 0;
        content
            .settle(&chunker, true, &mut |b| {
                new += 1;
                store.put(b)
            })
            .unwrap();
        assert!(new <= 3, "{new} chunks stored for a 7-byte change");
        let after: Vec<(u64, Piece)> = content.pieces().map(|(a, p)| (a, p.clone())).collect();
        let kept = before.iter().filter(|p| after.contains(p)).count();
        assert!(kept + 3 >= before.len(), "kept {kept} of {}", before.len());
    }

    #[test]
    fn reads_in_order_are_told_from_others_and_the_chunks_after_them_listed() {
        let id = |n: u8| Id([n; 32]);
        let mut content =
            Content::from_chunks([(id(1), 4 << 20), (id(2), 4 << 20), (id(3), 4 << 20)]);
        let mut none = |_: &Id| Err(());
        content.set_size(20 << 20, &mut none).unwrap();
        content.write(18 << 20, b"written", &mut none).unwrap();
        assert!(content.read_in_order(0, 1 << 20), "the first read of a file");
        assert!(content.read_in_order(1 << 20, 2 << 20), "going on");
        assert!(content.read_in_order(1 << 20, 2 << 20), "two requests in flight, reordered");
        assert!(!content.read_in_order(15 << 20, 16 << 20), "a jump ahead");
        assert!(!content.read_in_order(3 << 20, 4 << 20), "a jump back");
        // From inside the first chunk: it and the next, not past the window; holes and written
        // bytes are nothing to open.
        assert_eq!(content.stored_within(1 << 20, 4 << 20), [id(1), id(2)]);
        assert_eq!(content.stored_within(9 << 20, 16 << 20), [id(3)]);
        assert!(content.stored_within(12 << 20, 16 << 20).is_empty());
    }

    #[test]
    fn a_read_within_one_stored_chunk_is_answered_from_it_and_no_other() {
        let id = |n: u8| Id([n; 32]);
        let mut content = Content::from_chunks([(id(1), 1000), (id(2), 500)]);
        let mut none = |_: &Id| Err(());
        assert_eq!(content.stored_span(0, 1000), Some((id(1), 0, 1000)));
        assert_eq!(content.stored_span(1200, 100), Some((id(2), 200, 100)));
        assert_eq!(content.stored_span(1200, 4096), Some((id(2), 200, 300)), "cut at the end");
        assert_eq!(content.stored_span(900, 200), None, "across two chunks");
        assert_eq!(content.stored_span(1500, 10), None, "past the end");
        content.set_size(3000, &mut none).unwrap();
        content.write(2000, b"new", &mut none).unwrap();
        assert_eq!(content.stored_span(1600, 10), None, "a hole");
        assert_eq!(content.stored_span(2000, 3), None, "written bytes");
    }

    #[test]
    fn runs_of_zero_chunks_load_as_one_hole_each() {
        let id = |n: u8| Id([n; 32]);
        let zero = id(0);
        let chunks =
            [(zero, 8), (zero, 8), (id(1), 4), (zero, 8), (id(2), 2), (zero, 8), (zero, 8)];
        let content = Content::from_chunks_and_holes(chunks, |c| *c == zero);
        let pieces: Vec<(u64, Piece)> = content.pieces().map(|(at, p)| (at, p.clone())).collect();
        assert_eq!(
            pieces,
            vec![
                (0, Piece::Hole { len: 16 }),
                (16, Piece::Stored { id: id(1), len: 4 }),
                (20, Piece::Hole { len: 8 }),
                (28, Piece::Stored { id: id(2), len: 2 }),
                (30, Piece::Hole { len: 16 }),
            ]
        );
        assert_eq!((content.size(), content.allocated()), (46, 6));
    }

    #[test]
    fn holes_take_no_space_and_read_as_zeros() {
        let mut content = Content::default();
        let mut none = |_: &Id| Err(());
        content.write(1 << 30, b"end", &mut none).unwrap();
        assert_eq!(content.size(), (1 << 30) + 3);
        assert_eq!(content.allocated(), 3);
        let mut out = Vec::new();
        assert_eq!(content.read((1 << 30) - 5, 8, &mut out, &mut none).unwrap(), 8);
        assert_eq!(&out, b"\0\0\0\0\0end");
    }
}
