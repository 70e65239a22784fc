package dynamo

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Attribute names of every item (doc.go, "Items").
const (
	attrPK      = "pk"  // the table's partition key: kind#id
	attrVersion = "v"   // the item's version, 1 when created
	attrData    = "d"   // the record, as JSON
	attrTTL     = "ttl" // epoch seconds after which DynamoDB may delete the item
	attrWriter  = "w"   // the token of the commit that wrote this version
)

// indexes are the table's global secondary indexes, each with a partition
// attribute gNpk and a sort attribute gNsk (doc.go, "Indexes").
var indexes = []string{"gsi1", "gsi2", "gsi3", "gsi4", "gsi5"}

func key(pk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPK: &types.AttributeValueMemberS{Value: pk}}
}

// str is a string attribute of an item, or "".
func str(it item, name string) string {
	if s, ok := it[name].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// num is a number attribute of an item, or 0.
func num(it item, name string) int64 {
	if n, ok := it[name].(*types.AttributeValueMemberN); ok {
		v, _ := strconv.ParseInt(n.Value, 10, 64)
		return v
	}
	return 0
}

// newItem is an item holding rec as JSON, with these index attributes
// (pairs of name and value; an empty value leaves the attribute out, so
// the item is not in that index).
func newItem(rec any, attrs ...string) (item, error) {
	b, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("dynamodb: encode %T: %w", rec, err)
	}
	it := item{attrData: &types.AttributeValueMemberS{Value: string(b)}}
	for i := 0; i+1 < len(attrs); i += 2 {
		if v := attrs[i+1]; v != "" {
			if strings.HasSuffix(attrs[i], "pk") {
				v = partValue(v)
			}
			it[attrs[i]] = &types.AttributeValueMemberS{Value: v}
		}
	}
	return it, nil
}

// maxPart is the longest index partition value kept as it is: the service
// takes 2048 bytes, and a value holds free text (an address, a webhook
// URL) that a caller may make long.
const maxPart = 1024

// partValue is an index partition value as stored: itself, or when longer than
// maxPart its SHA-256 (the same for every item and query of that value).
func partValue(v string) string {
	if len(v) <= maxPart {
		return v
	}
	sum := sha256.Sum256([]byte(v))
	return "h#" + hex.EncodeToString(sum[:])
}

// decode reads the record of an item into rec. Its times come back in
// UTC, as the SQL stores give them (JSON keeps the offset they were
// written with).
func decode(it item, rec any) error {
	if err := json.Unmarshal([]byte(str(it, attrData)), rec); err != nil {
		return fmt.Errorf("dynamodb: decode %s: %w", str(it, attrPK), err)
	}
	inUTC(reflect.ValueOf(rec))
	return nil
}

var timeType = reflect.TypeFor[time.Time]()

// inUTC sets every time reachable from v (through pointers, struct
// fields, slices and map values of struct type) to UTC.
func inUTC(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			inUTC(v.Elem())
		}
	case reflect.Struct:
		if v.Type() == timeType {
			if v.CanSet() {
				v.Set(reflect.ValueOf(v.Interface().(time.Time).UTC()))
			}
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				inUTC(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			inUTC(v.Index(i))
		}
	}
}

// withTTL adds the expiry attribute: DynamoDB deletes the item some time
// after t (within days; the store's purges do it on time).
func withTTL(it item, t time.Time) item {
	if !t.IsZero() {
		it[attrTTL] = &types.AttributeValueMemberN{Value: strconv.FormatInt(t.Unix(), 10)}
	}
	return it
}

// ts is a time as a sort key: fixed width, UTC, so that strings sort as
// times do.
func ts(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000000Z")
}

// seqKey is a number as a sort key: fixed width.
func seqKey(n int64) string { return fmt.Sprintf("%020d", n) }

// Consumed adds up the capacity units the store's calls report, by call
// (Measure turns it on).
type Consumed struct {
	mu     sync.Mutex
	Read   float64
	Write  float64
	ByCall map[string][2]float64 // call → read, write units
	Calls  int                   // calls made
}

func (c *Consumed) add(call string, cc *types.ConsumedCapacity) {
	if c == nil || cc == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Calls++
	if cc.CapacityUnits == nil {
		return
	}
	// The total (ReturnConsumedCapacity TOTAL): a read call's units are
	// read units, the rest (a transaction's checks too) write units.
	var r, w float64
	switch call {
	case "GetItem", "Query", "BatchGetItem", "Scan":
		r = *cc.CapacityUnits
	default:
		w = *cc.CapacityUnits
	}
	c.Read += r
	c.Write += w
	if c.ByCall == nil {
		c.ByCall = map[string][2]float64{}
	}
	v := c.ByCall[call]
	c.ByCall[call] = [2]float64{v[0] + r, v[1] + w}
}

// Take returns what was consumed since the last Take and starts again.
func (c *Consumed) Take() (read, write float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	read, write = c.Read, c.Write
	c.Read, c.Write, c.ByCall, c.Calls = 0, 0, nil, 0
	return read, write
}

// TakeCalls returns how many calls were made since the last Take (and
// what they consumed), and starts again.
func (c *Consumed) TakeCalls() (calls int, read, write float64) {
	c.mu.Lock()
	calls = c.Calls
	c.mu.Unlock()
	read, write = c.Take()
	return calls, read, write
}

// Measure has the store ask every call for the capacity it consumed and
// add it up in the Consumed it returns.
func (s *Store) Measure() *Consumed {
	s.consumed = &Consumed{}
	return s.consumed
}

// rcc is the ReturnConsumedCapacity of every call.
func (s *Store) rcc() types.ReturnConsumedCapacity {
	if s.consumed == nil {
		return types.ReturnConsumedCapacityNone
	}
	return types.ReturnConsumedCapacityTotal
}
