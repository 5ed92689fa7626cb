//! Key files (`keys/<id>`): the KDF, its parameters and salt, a label, and the sealed master key.

use super::wire::{Reader, Writer};
use super::DecodeError;

const MAGIC: &[u8; 4] = b"DDSK";
const VERSION: u8 = 1;
/// Longest label accepted.
pub const MAX_LABEL: usize = 1024;
/// Length of the sealed master key: 24-byte nonce, 32-byte key, 16-byte tag.
pub const WRAPPED_LEN: usize = 72;

/// The costs a reader accepts at most (docs/store-format.md §4): a key file is read before
/// anything in the repository is authenticated, so a planted or damaged one must not make an
/// open allocate the machine away or take minutes. RFC 9106's first recommended setting
/// (2 GiB, one pass) is within them, and so is the default (64 MiB, three passes) 21 times over.
pub const MAX_MEMORY_KIB: u32 = 2 << 20;
/// Iterations (passes) at most.
pub const MAX_ITERATIONS: u32 = 16;
/// Lanes at most.
pub const MAX_LANES: u32 = 16;
/// Memory times passes at most, in KiB: 4 GiB of blocks to fill.
pub const MAX_WORK_KIB: u64 = 4 << 20;
/// A slot whose work is above this many times the default's is named as slow when tried.
pub const SLOW_FACTOR: u64 = 4;
/// The least memory `init` and `key` accept outside tests (OWASP's minimum for argon2id):
/// 19 MiB, and memory times passes at least twice that.
pub const FLOOR_MEMORY_KIB: u32 = 19 << 10;
/// The least memory times passes, in KiB, outside tests.
pub const FLOOR_WORK_KIB: u64 = 2 * (19 << 10);

/// The password KDF of a key slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kdf {
    /// No password (unencrypted repositories): the wrapping key is zero.
    None,
    /// argon2id, version 0x13.
    Argon2id,
}

/// argon2 cost parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KdfParams {
    /// Memory in KiB.
    pub memory_kib: u32,
    /// Iterations.
    pub iterations: u32,
    /// Lanes.
    pub lanes: u32,
}

impl KdfParams {
    /// Memory times passes, in KiB: what one try of the password costs.
    pub fn work_kib(&self) -> u64 {
        u64::from(self.memory_kib) * u64::from(self.iterations)
    }

    /// Why these parameters are refused (beyond the caps, or not valid for argon2), if they are.
    pub fn out_of_bounds(&self) -> Option<String> {
        let why = if self.iterations == 0 || self.lanes == 0 {
            "iterations and lanes must be at least 1"
        } else if u64::from(self.memory_kib) < 8 * u64::from(self.lanes) {
            "memory must be at least 8 KiB per lane"
        } else if self.memory_kib > MAX_MEMORY_KIB {
            "memory above 2 GiB"
        } else if self.iterations > MAX_ITERATIONS {
            "more than 16 iterations"
        } else if self.lanes > MAX_LANES {
            "more than 16 lanes"
        } else if self.work_kib() > MAX_WORK_KIB {
            "memory times iterations above 4 GiB"
        } else {
            return None;
        };
        Some(format!(
            "{why} (m = {} KiB, t = {}, p = {})",
            self.memory_kib, self.iterations, self.lanes
        ))
    }

    /// Why these parameters are too weak for a real password, if they are.
    pub fn below_floor(&self) -> Option<String> {
        (self.memory_kib < FLOOR_MEMORY_KIB || self.work_kib() < FLOOR_WORK_KIB).then(|| {
            format!(
                "argon2 memory {} KiB with {} iteration(s) is too weak: at least {FLOOR_MEMORY_KIB} \
                 KiB, and memory times iterations at least {FLOOR_WORK_KIB} KiB",
                self.memory_kib, self.iterations
            )
        })
    }

    /// Whether trying these parameters is slow: work above [`SLOW_FACTOR`] times the default's.
    pub fn is_slow(&self) -> bool {
        self.work_kib() > SLOW_FACTOR * KdfParams::default().work_kib()
    }
}

impl Default for KdfParams {
    /// RFC 9106's second recommended option (64 MiB, 3 passes, 4 lanes): its lanes are computed
    /// on several cores at once, so a command opening the repository waits for a fraction of the
    /// single-lane time at the same memory and pass cost.
    fn default() -> Self {
        KdfParams { memory_kib: 65536, iterations: 3, lanes: 4 }
    }
}

/// A decoded key file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyFile {
    /// The KDF.
    pub kdf: Kdf,
    /// Its parameters.
    pub params: KdfParams,
    /// The salt.
    pub salt: [u8; 32],
    /// Creation time, ns since the epoch.
    pub created: i64,
    /// A label such as `user@host`.
    pub label: String,
    /// The sealed master key.
    pub wrapped: [u8; WRAPPED_LEN],
}

impl KeyFile {
    /// Every byte before the sealed master key: the associated data of its box.
    pub fn associated_data(&self) -> Vec<u8> {
        let mut out = Writer::default();
        out.raw(MAGIC);
        out.u8(VERSION);
        out.u8(match self.kdf {
            Kdf::None => 0,
            Kdf::Argon2id => 1,
        });
        out.raw(&[0, 0]);
        out.u32(self.params.memory_kib);
        out.u32(self.params.iterations);
        out.u32(self.params.lanes);
        out.raw(&self.salt);
        out.i64(self.created);
        out.bytes(self.label.as_bytes());
        out.buf
    }

    /// The complete file.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = self.associated_data();
        out.extend_from_slice(&self.wrapped);
        out
    }

    /// Decodes a key file.
    pub fn decode(bytes: &[u8]) -> Result<KeyFile, DecodeError> {
        let mut input = Reader::new(bytes);
        if input.take(4)? != MAGIC {
            return Err(DecodeError::Magic { expected: "key" });
        }
        input.version(VERSION)?;
        let kdf = match input.u8()? {
            0 => Kdf::None,
            1 => Kdf::Argon2id,
            other => return Err(DecodeError::invalid(format!("unknown KDF {other}"))),
        };
        if input.take(2)? != [0, 0] {
            return Err(DecodeError::invalid("reserved bytes are not zero"));
        }
        let params =
            KdfParams { memory_kib: input.u32()?, iterations: input.u32()?, lanes: input.u32()? };
        if kdf == Kdf::Argon2id {
            if let Some(why) = params.out_of_bounds() {
                return Err(DecodeError::invalid(format!("argon2 parameters refused: {why}")));
            }
        }
        let salt = input.array()?;
        let created = input.i64()?;
        let label = input.str(MAX_LABEL, "label")?;
        let wrapped = input.array()?;
        input.finish()?;
        Ok(KeyFile { kdf, params, salt, created, label, wrapped })
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn key_strategy() -> impl Strategy<Value = KeyFile> {
        (
            any::<bool>(),
            8u32..1 << 20,
            1u32..5,
            1u32..4,
            any::<[u8; 32]>(),
            any::<i64>(),
            ".{0,40}",
            any::<[u8; 32]>(),
        )
            .prop_map(
                |(argon, memory_kib, iterations, lanes, salt, created, label, half)| KeyFile {
                    kdf: if argon { Kdf::Argon2id } else { Kdf::None },
                    params: KdfParams { memory_kib: memory_kib.max(8 * lanes), iterations, lanes },
                    salt,
                    created,
                    label,
                    wrapped: {
                        let mut w = [7u8; WRAPPED_LEN];
                        w[..32].copy_from_slice(&half);
                        w
                    },
                },
            )
    }

    proptest! {
        #[test]
        fn key_file_round_trips(key in key_strategy()) {
            prop_assert_eq!(KeyFile::decode(&key.encode()), Ok(key));
        }

        #[test]
        fn mutated_key_file_never_panics(key in key_strategy(), at in any::<usize>(), byte in 1u8.., cut in any::<usize>()) {
            crate::format::damaged_input(&key.encode(), at, byte, cut, KeyFile::decode);
        }
    }

    #[test]
    fn absurd_kdf_costs_are_refused() {
        let mut key = KeyFile {
            kdf: Kdf::Argon2id,
            params: KdfParams::default(),
            salt: [1; 32],
            created: 0,
            label: String::new(),
            wrapped: [0; WRAPPED_LEN],
        };
        key.params.memory_kib = u32::MAX;
        assert!(KeyFile::decode(&key.encode()).is_err());
        // Each cap alone, and the product of memory and passes.
        for (memory_kib, iterations, lanes) in
            [(4 << 20, 1, 4), (65536, 17, 4), (65536, 3, 17), (2 << 20, 3, 4), (8, 1, 2)]
        {
            key.params = KdfParams { memory_kib, iterations, lanes };
            let err = KeyFile::decode(&key.encode()).unwrap_err().to_string();
            assert!(err.contains("argon2 parameters refused"), "{err}");
        }
        // RFC 9106's first recommended setting is not refused.
        key.params = KdfParams { memory_kib: 2 << 20, iterations: 1, lanes: 4 };
        assert_eq!(KeyFile::decode(&key.encode()).unwrap().params, key.params);
        assert!(key.params.is_slow() && !KdfParams::default().is_slow());
    }

    #[test]
    fn the_floor_refuses_weak_parameters_and_takes_the_defaults() {
        assert!(KdfParams::default().below_floor().is_none());
        let owasp = KdfParams { memory_kib: 19 << 10, iterations: 2, lanes: 1 };
        assert!(owasp.below_floor().is_none());
        for (memory_kib, iterations) in [(64, 1), (19 << 10, 1), (18 << 10, 4)] {
            let weak = KdfParams { memory_kib, iterations, lanes: 1 };
            assert!(weak.below_floor().is_some(), "{weak:?}");
        }
    }
}
