//! The key hierarchy (docs/store-format.md §3–4): a random master key, the working keys derived
//! from it, and key slots that wrap it with an argon2id key from a password.

use argon2::{Algorithm, Argon2, Params, Version};
use zeroize::Zeroizing;

use crate::crypto::kdf_memory::KdfMemory;
use crate::crypto::secret::SecretBytes;
use crate::crypto::{fill_random, Sealer};
use crate::format::{Kdf, KdfParams, KeyFile};

/// The working keys of an open repository, each in memory of its own ([`SecretBytes`]: out of
/// core dumps, zeroed when dropped). Not `Clone`: the repository holds the one copy.
#[derive(Debug)]
pub struct Keys {
    /// Key of every sealed box but key files.
    pub data: SecretBytes<32>,
    /// Key of blob ids.
    pub id: SecretBytes<32>,
    /// Key of the chunker's gear table.
    pub gear: SecretBytes<32>,
}

/// The master key, in memory of its own; neither `Clone` nor printable.
#[derive(Debug)]
pub struct MasterKey(SecretBytes<32>);

impl MasterKey {
    /// A new random master key.
    pub fn generate() -> Self {
        MasterKey(SecretBytes::fill(|key| fill_random(key)))
    }

    /// The master key whose bytes are `bytes` (a key unwrapped, or one a test makes).
    pub fn from_bytes(bytes: &[u8; 32]) -> Self {
        MasterKey(SecretBytes::fill(|key| key.copy_from_slice(bytes)))
    }

    /// The working keys.
    pub fn derive(&self) -> Keys {
        let derive =
            |context: &str| SecretBytes::fill(|key| *key = blake3::derive_key(context, &*self.0));
        Keys {
            data: derive("dedup store v1 data encryption"),
            id: derive("dedup store v1 blob id"),
            gear: derive("dedup store v1 chunker gear table"),
        }
    }

    /// A one-way fingerprint of the key, which a client remembers to notice when a repository's
    /// key changed (docs/store-format.md, "Outside the repository: the client's state"): knowing
    /// it reveals nothing of the key or of any key derived from it.
    pub fn fingerprint(&self) -> [u8; 32] {
        blake3::derive_key("dedup store v1 client key fingerprint", &*self.0)
    }
}

/// Why a key slot does not open.
#[derive(Debug, thiserror::Error)]
pub enum UnwrapError {
    /// The password is not this slot's (or the slot is damaged: the two look the same).
    #[error("the password does not open this key")]
    WrongPassword,
    /// The stored KDF parameters are refused by argon2.
    #[error("argon2: {0}")]
    Kdf(String),
}

fn wrapping_key(
    kdf: Kdf,
    params: KdfParams,
    salt: &[u8; 32],
    password: &[u8],
) -> Result<Zeroizing<[u8; 32]>, UnwrapError> {
    let mut out = Zeroizing::new([0u8; 32]);
    if kdf == Kdf::Argon2id {
        // The caps of the key file format, checked here too: a slot this program writes is one
        // it reads, and nothing reaches argon2 beyond them.
        if let Some(why) = params.out_of_bounds() {
            return Err(UnwrapError::Kdf(why));
        }
        let params = Params::new(params.memory_kib, params.iterations, params.lanes, Some(32))
            .map_err(|e| UnwrapError::Kdf(e.to_string()))?;
        argon2id_into(
            &Argon2::new(Algorithm::Argon2id, Version::V0x13, params),
            password,
            salt,
            &mut *out,
        )?;
    }
    Ok(out)
}

/// `argon2`'s hash of `password` and `salt` into `out`, in memory of [`KdfMemory`] (its lanes
/// fault the pages in, in parallel, instead of one thread zeroing them first).
fn argon2id_into(
    argon2: &Argon2<'_>,
    password: &[u8],
    salt: &[u8],
    out: &mut [u8],
) -> Result<(), UnwrapError> {
    let mut memory = KdfMemory::new(argon2.params().block_count())
        .map_err(|e| UnwrapError::Kdf(format!("cannot map its memory: {e}")))?;
    let hashed = argon2.hash_password_into_with_memory(password, salt, out, memory.blocks());
    memory.release_in_background();
    hashed.map_err(|e| UnwrapError::Kdf(e.to_string()))
}

/// A key slot holding `master`, opened by `password` (ignored for [`Kdf::None`]).
pub fn wrap(
    master: &MasterKey,
    kdf: Kdf,
    params: KdfParams,
    password: &[u8],
    label: String,
    created: i64,
) -> Result<KeyFile, UnwrapError> {
    let mut salt = [0u8; 32];
    fill_random(&mut salt);
    let mut file = KeyFile { kdf, params, salt, created, label, wrapped: [0; 72] };
    let key = wrapping_key(kdf, params, &salt, password)?;
    let sealed = Sealer::new(*key, true).seal(&file.associated_data(), &*master.0);
    file.wrapped.copy_from_slice(&sealed);
    Ok(file)
}

/// The master key in `file`, if `password` opens it.
pub fn unwrap(file: &KeyFile, password: &[u8]) -> Result<MasterKey, UnwrapError> {
    let key = wrapping_key(file.kdf, file.params, &file.salt, password)?;
    let plain = Zeroizing::new(
        Sealer::new(*key, true)
            .open(&file.associated_data(), &file.wrapped)
            .map_err(|_| UnwrapError::WrongPassword)?,
    );
    let bytes = plain.get(..32).and_then(|b| <&[u8; 32]>::try_from(b).ok());
    Ok(MasterKey::from_bytes(bytes.ok_or(UnwrapError::WrongPassword)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHEAP: KdfParams = KdfParams { memory_kib: 64, iterations: 1, lanes: 1 };

    #[test]
    fn a_slot_opens_with_its_password_only() {
        let master = MasterKey::generate();
        let file = wrap(&master, Kdf::Argon2id, CHEAP, b"secret", "me@here".into(), 5).unwrap();
        assert_eq!(unwrap(&file, b"secret").unwrap().fingerprint(), master.fingerprint());
        assert!(matches!(unwrap(&file, b"Secret"), Err(UnwrapError::WrongPassword)));
        let mut changed = file.clone();
        changed.label = "someone@else".into();
        assert!(matches!(unwrap(&changed, b"secret"), Err(UnwrapError::WrongPassword)));
    }

    /// The wrapping key must stay argon2id as any other implementation computes it, whatever the
    /// lane count and however the lanes are scheduled: a slot written by one build must open in
    /// every later one. The expected values come from the reference C implementation
    /// (argon2-cffi's `hash_secret_raw`, type ID, m = 256 KiB, t = 2, salt 0..32).
    #[test]
    fn wrapping_keys_match_the_reference_implementation() {
        let salt: [u8; 32] = std::array::from_fn(|i| i as u8);
        for (lanes, expected) in [
            (1, "fe24b0b059dfc686e550e65b8b475fdfbb0e7d82a15e2b1dd16e4d92b7c9c351"),
            (4, "3e8f1df95894adcc6e58435ce4eae421e09bd3157ee31f1c9d32fec36b431dfa"),
        ] {
            let params = KdfParams { memory_kib: 256, iterations: 2, lanes };
            let key = wrapping_key(Kdf::Argon2id, params, &salt, b"correct horse").unwrap();
            let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(hex, expected, "{lanes} lanes");
        }
    }

    /// RFC 9106's Argon2id test vector (§5.3: 32 KiB, t = 3, p = 4, with a secret and associated
    /// data) through the memory and lane scheduling used for every key slot: four lanes on
    /// rayon's threads in a fresh mapping must give the reference tag.
    #[test]
    fn rfc9106_argon2id_vector_in_kdf_memory() {
        let params = argon2::ParamsBuilder::new()
            .m_cost(32)
            .t_cost(3)
            .p_cost(4)
            .data(argon2::AssociatedData::new(&[4; 12]).unwrap())
            .output_len(32)
            .build()
            .unwrap();
        let argon2 =
            Argon2::new_with_secret(&[3; 8], Algorithm::Argon2id, Version::V0x13, params).unwrap();
        let mut out = [0u8; 32];
        argon2id_into(&argon2, &[1; 32], &[2; 16], &mut out).unwrap();
        let hex: String = out.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659");
    }

    #[test]
    fn derived_keys_are_distinct() {
        let master = MasterKey::from_bytes(&[1; 32]);
        let keys = master.derive();
        assert_ne!(*keys.data, *keys.id);
        assert_ne!(*keys.id, *keys.gear);
        assert_ne!(*keys.data, [1; 32]);
        assert!(![*keys.data, *keys.id, *keys.gear].contains(&master.fingerprint()));
        assert_ne!(master.fingerprint(), MasterKey::from_bytes(&[2; 32]).fingerprint());
    }
}
