package nextup

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"errors"
)

// Seal encrypts and authenticates plain with AES-256-GCM under a key
// derived from secret, for data that must be kept but only read back by
// whoever holds the secret (a stored idempotent response, sealed with the
// client's Idempotency-Key; a join awaiting confirmation, sealed with a
// business's key hash). The result carries its random nonce.
func Seal(secret string, plain []byte) ([]byte, error) {
	gcm, err := sealer(secret)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, gcm.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return gcm.Seal(nonce, nonce, plain, nil), nil
}

// Unseal opens what Seal sealed with the same secret; anything else, or
// anything changed, is an error.
func Unseal(secret string, sealed []byte) ([]byte, error) {
	gcm, err := sealer(secret)
	if err != nil {
		return nil, err
	}
	if len(sealed) < gcm.NonceSize() {
		return nil, errors.New("sealed data too short")
	}
	return gcm.Open(nil, sealed[:gcm.NonceSize()], sealed[gcm.NonceSize():], nil)
}

func sealer(secret string) (cipher.AEAD, error) {
	k := sha256.Sum256([]byte("nextup idempotency seal\x00" + secret))
	block, err := aes.NewCipher(k[:])
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
