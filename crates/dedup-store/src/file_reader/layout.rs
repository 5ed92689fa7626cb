//! Where each chunk of a regular file starts in the file: the chunk ids of its node and the
//! prefix sums of their lengths, taken from the index in memory (no I/O), so that a read at any
//! offset finds its first chunk by bisection. Where a chunk is stored is looked up at each read
//! instead, in the index of the moment: a prune while a file is open moves chunks to other packs
//! but changes neither their ids nor their lengths.

use crate::blob::BlobKind;
use crate::format::{Content, Node, NodeKind};
use crate::id::Id;
use crate::index::Index;

/// A regular file's chunks and where each starts.
#[derive(Debug)]
pub struct FileLayout {
    ids: Vec<Id>,
    /// Where each chunk starts in the file, and one more entry: the end of the last.
    starts: Vec<u64>,
    /// The first chunk the index did not know: the content ends before it.
    missing: Option<Id>,
}

impl FileLayout {
    /// The layout of `node`, its chunks' lengths looked up in `index`; `None` unless it is a
    /// regular file.
    pub fn of(node: &Node, index: &Index) -> Option<FileLayout> {
        if node.kind != NodeKind::File {
            return None;
        }
        let chunks: &[Id] = match &node.content {
            Content::Chunks(chunks) => chunks,
            _ => &[],
        };
        Some(FileLayout::new(index, chunks))
    }

    /// The layout of `chunks`, their lengths looked up in `index`.
    pub fn new(index: &Index, chunks: &[Id]) -> FileLayout {
        let mut ids = Vec::with_capacity(chunks.len());
        let mut starts = Vec::with_capacity(chunks.len() + 1);
        let mut at = 0u64;
        starts.push(0);
        let mut missing = None;
        for id in chunks {
            let Some(location) = index.lookup(id, BlobKind::Data) else {
                missing = Some(*id);
                break;
            };
            at += u64::from(location.entry.raw_len);
            ids.push(*id);
            starts.push(at);
        }
        FileLayout { ids, starts, missing }
    }

    /// Bytes of content the layout can give: the whole file, unless a chunk is missing.
    pub fn len(&self) -> u64 {
        *self.starts.last().expect("starts holds one more entry than the chunks")
    }

    /// Whether the layout gives no byte.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first chunk the index did not know when the layout was made (the content ends
    /// before it), if any.
    pub fn missing(&self) -> Option<&Id> {
        self.missing.as_ref()
    }

    /// How many chunks the layout gives.
    pub fn chunk_count(&self) -> usize {
        self.ids.len()
    }

    /// Chunk `n`'s id.
    pub fn id(&self, n: usize) -> &Id {
        &self.ids[n]
    }

    /// Where chunk `n` starts and ends in the file.
    pub fn span(&self, n: usize) -> (u64, u64) {
        (self.starts[n], self.starts[n + 1])
    }

    /// The chunk holding byte `offset` (which is below `len()`).
    pub fn chunk_at(&self, offset: u64) -> usize {
        self.starts.partition_point(|&start| start <= offset) - 1
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::format::{BlobEntry, Compression};

    pub(crate) fn id(n: u8) -> Id {
        Id([n; 32])
    }

    /// An index of data blobs `id(1)`, `id(2)`, … of `lengths`, in one pack `id(200)`.
    pub(crate) fn index_of(lengths: &[u32]) -> Index {
        let mut offset = 0;
        let blobs: Vec<BlobEntry> = lengths
            .iter()
            .enumerate()
            .map(|(n, &raw_len)| {
                let entry = BlobEntry {
                    id: id(n as u8 + 1),
                    compression: Compression::None,
                    offset,
                    stored_len: raw_len + 40,
                    raw_len,
                };
                offset += raw_len + 40;
                entry
            })
            .collect();
        let mut index = Index::new();
        index.add_pack(id(200), BlobKind::Data, &blobs);
        index
    }

    #[test]
    fn each_offset_falls_in_the_chunk_that_holds_it() {
        let index = index_of(&[10, 5, 20]);
        let layout = FileLayout::new(&index, &[id(1), id(2), id(3), id(2)]);
        assert_eq!(layout.len(), 40);
        assert_eq!(layout.missing(), None);
        let chunks: Vec<usize> = [0, 9, 10, 14, 15, 34, 35, 39].map(|o| layout.chunk_at(o)).into();
        assert_eq!(chunks, [0, 0, 1, 1, 2, 2, 3, 3]);
        assert_eq!(layout.id(3), &id(2));
        assert_eq!(layout.span(2), (15, 35));
    }

    #[test]
    fn a_chunk_missing_from_the_index_ends_the_content_before_it() {
        let index = index_of(&[10, 5]);
        let layout = FileLayout::new(&index, &[id(1), id(9), id(2)]);
        assert_eq!(layout.missing(), Some(&id(9)));
        assert_eq!((layout.len(), layout.chunk_count()), (10, 1));
        assert!(FileLayout::new(&index, &[]).is_empty());
    }

    #[test]
    fn only_regular_files_have_a_layout() {
        let index = index_of(&[10]);
        let file =
            Node { kind: NodeKind::File, content: Content::Chunks(vec![id(1)]), ..Node::default() };
        assert_eq!(FileLayout::of(&file, &index).map(|l| l.len()), Some(10));
        let dir = Node { kind: NodeKind::Dir, ..Node::default() };
        assert!(FileLayout::of(&dir, &index).is_none());
    }
}
