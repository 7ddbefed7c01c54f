//! CRC-32C (Castagnoli), the checksum of checkpoints and of their history records.
//!
//! A CRC detects every error burst of up to 32 bits (so every damaged byte and every
//! single flipped bit) and any other damage with probability 1 − 2⁻³²; CRC-32C's polynomial
//! has the better Hamming distance of the 32-bit CRCs at the lengths of files (Castagnoli,
//! Bräuer and Herrmann 1993) and is the one of iSCSI, ext4 and Btrfs.

/// The reflected CRC-32C polynomial 0x1EDC6F41.
const POLYNOMIAL: u32 = 0x82F6_3B78;

/// One table entry per byte value, built at compile time.
const TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u32;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ POLYNOMIAL
            } else {
                crc >> 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
};

/// The CRC-32C of `bytes`.
#[must_use]
pub fn crc32c(bytes: &[u8]) -> u32 {
    crc32c_append(0, bytes)
}

/// The CRC-32C of the bytes whose CRC is `crc` followed by `bytes`: `crc32c(a ++ b) ==
/// crc32c_append(crc32c(a), b)`.
#[must_use]
pub fn crc32c_append(crc: u32, bytes: &[u8]) -> u32 {
    let mut state = !crc;
    for &b in bytes {
        state = TABLE[((state ^ u32::from(b)) & 0xFF) as usize] ^ (state >> 8);
    }
    !state
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_check_values() {
        // The check value of the CRC catalogue (Greg Cook, "CRC-32/ISCSI") and the test
        // vectors of RFC 3720, appendix B.4.
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32c(&[0u8; 32]), 0x8A91_36AA);
        assert_eq!(crc32c(&[0xFFu8; 32]), 0x62A8_AB43);
        let ascending: Vec<u8> = (0..32).collect();
        assert_eq!(crc32c(&ascending), 0x46DD_794E);
        assert_eq!(crc32c(b""), 0);
    }

    #[test]
    fn appending_equals_the_whole() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 + 3) as u8).collect();
        for split in [0, 1, 17, 999, 1000] {
            let (a, b) = data.split_at(split);
            assert_eq!(crc32c_append(crc32c(a), b), crc32c(&data));
        }
    }
}
