//! Key files (`keys/<id>`): the KDF, its parameters and salt, a label, and the sealed master key.

use super::wire::{Reader, Writer};
use super::DecodeError;

const MAGIC: &[u8; 4] = b"DDSK";
const VERSION: u8 = 1;
/// Longest label accepted.
pub const MAX_LABEL: usize = 1024;
/// Length of the sealed master key: 24-byte nonce, 32-byte key, 16-byte tag.
pub const WRAPPED_LEN: usize = 72;

/// Bounds a reader accepts, so a damaged file cannot make it allocate the machine away.
const MAX_MEMORY_KIB: u32 = 4 << 20;
const MAX_ITERATIONS: u32 = 100;
const MAX_LANES: u32 = 64;

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
        if kdf == Kdf::Argon2id
            && (params.memory_kib > MAX_MEMORY_KIB
                || params.iterations == 0
                || params.iterations > MAX_ITERATIONS
                || params.lanes == 0
                || params.lanes > MAX_LANES
                || params.memory_kib < 8 * params.lanes)
        {
            return Err(DecodeError::invalid(format!(
                "argon2 parameters out of range: {params:?}"
            )));
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
            1u32..10,
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
    }
}
