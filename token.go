package nextup

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"sync"
)

// TokenBytes is the size of every secret link token: 192 random bits,
// comfortably above the 128 the design asks for.
const TokenBytes = 24

// Random is the source of IDs and secret tokens. Production uses
// crypto/rand; the simulation passes a seeded source so a seed replays
// exactly. It is safe for concurrent use.
type Random struct {
	mu sync.Mutex
	r  io.Reader
}

// NewRandom returns a Random reading from r, or from crypto/rand when r is nil.
func NewRandom(r io.Reader) *Random {
	if r == nil {
		r = rand.Reader
	}
	return &Random{r: r}
}

func (g *Random) read(b []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, err := io.ReadFull(g.r, b); err != nil {
		// crypto/rand never fails on supported platforms; a seeded source never ends.
		panic(fmt.Sprintf("nextup: random source failed: %v", err))
	}
}

var idEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// ID returns a new opaque id with a readable prefix, e.g. "off_5k2...".
func (g *Random) ID(prefix string) string {
	b := make([]byte, 10)
	g.read(b)
	return prefix + "_" + idEncoding.EncodeToString(b)
}

// ExternalID is the id, shaped like ID's, that another system's id ref
// maps to within scope (a business): the same inputs always give the same
// id, so a row named after an outside id needs no table of mappings (the
// slot of a booking tool's appointment). Eighty bits of SHA-256 keep
// distinct refs apart.
func ExternalID(prefix, scope, ref string) string {
	sum := sha256.Sum256([]byte(scope + "\x00" + ref))
	return prefix + "_" + idEncoding.EncodeToString(sum[:10])
}

// Token returns a new secret token for a link and the hash to store.
func (g *Random) Token() (token, hash string) {
	b := make([]byte, TokenBytes)
	g.read(b)
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, HashToken(token)
}

// HashToken returns the hex SHA-256 of a token: what the store keeps and
// looks tokens up by. Tokens carry enough entropy that a fast hash is right.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	return hex.EncodeToString(sum[:])
}
