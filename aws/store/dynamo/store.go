package dynamo

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/nextup-dev/nextup"
)

// API is the part of the DynamoDB client the store calls: the SDK's
// *dynamodb.Client, or a wrapper around it (tests inject the service's
// errors with one).
type API interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
	CreateTable(context.Context, *dynamodb.CreateTableInput, ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	UpdateTimeToLive(context.Context, *dynamodb.UpdateTimeToLiveInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
	DescribeTimeToLive(context.Context, *dynamodb.DescribeTimeToLiveInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTimeToLiveOutput, error)
}

// MaxTxAttempts bounds how many times InTx runs its function when its
// commit keeps losing to other transactions.
const MaxTxAttempts = 30

// Store is nextup's state in one DynamoDB table (doc.go).
type Store struct {
	api   API
	table string

	// consumed, when set (Measure), adds up the capacity every call
	// reports.
	consumed *Consumed
	// onCommit, when set (OnCommit), is told what each committed
	// transaction did to timers and messages.
	onCommit func(ctx context.Context, c Committed)

	mu     sync.Mutex
	closed bool
}

var _ nextup.Store = (*Store)(nil)

// New returns the store on table through api. The table must exist
// (Migrate makes it).
func New(api API, table string) *Store {
	return &Store{api: api, table: table}
}

// Table is the name of the store's table.
func (s *Store) Table() string { return s.table }

// TableName is the table of a dynamodb:// URL's PREFIX: PREFIX followed
// by "nextup" ("dev-" names "dev-nextup"; none names "nextup").
func TableName(prefix string) string { return prefix + "nextup" }

// Open opens the store a URL names:
//
//	dynamodb://HOST:PORT/PREFIX?region=REGION   a DynamoDB-compatible server at http://HOST:PORT
//	dynamodb:///PREFIX?region=REGION            DynamoDB itself, with the default credential chain
//
// The table is TableName(PREFIX); migrate creates it (Migrate). A local
// server gets fixed dummy credentials unless the environment has some.
func Open(ctx context.Context, dsn string) (*Store, error) {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme != "dynamodb" {
		return nil, fmt.Errorf("dynamodb: %q is not a dynamodb:// URL", dsn)
	}
	var opts []func(*config.LoadOptions) error
	if r := u.Query().Get("region"); r != "" {
		opts = append(opts, config.WithRegion(r))
	}
	if u.Host != "" {
		opts = append(opts, config.WithCredentialsProvider(localCredentials()))
		if u.Query().Get("region") == "" {
			opts = append(opts, config.WithRegion("us-east-1"))
		}
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("dynamodb: %w", err)
	}
	client := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		if u.Host != "" {
			o.BaseEndpoint = aws.String("http://" + u.Host)
		}
	})
	return New(client, TableName(strings.TrimPrefix(u.Path, "/"))), nil
}

// localCredentials are the environment's credentials when it has some, or
// fixed ones a local server accepts.
func localCredentials() aws.CredentialsProvider {
	return credentials.NewStaticCredentialsProvider(envOr("AWS_ACCESS_KEY_ID", "local"), envOr("AWS_SECRET_ACCESS_KEY", "local"), os.Getenv("AWS_SESSION_TOKEN"))
}

// InTx runs fn in one transaction (doc.go, "Transactions"): when fn
// returns nil the buffered writes commit in one conditional call; when
// that call loses to another transaction (a version it relied on
// changed) or the service throttles it, fn runs again on fresh reads,
// after a short jittered wait, at most MaxTxAttempts times. An error or
// panic of fn discards the writes; an error is fn's answer unless an item
// fn read changed meanwhile, in which case fn runs again too (Tx.failed).
func (s *Store) InTx(ctx context.Context, fn func(tx nextup.Tx) error) error {
	if err := s.check(); err != nil {
		return err
	}
	var last error
	for attempt := 1; attempt <= MaxTxAttempts; attempt++ {
		if attempt > 1 {
			if err := s.backoff(ctx, attempt-1); err != nil {
				return fmt.Errorf("%w (after: %w)", err, last)
			}
		}
		tx := s.newTx(true)
		err := fn(tx)
		if err == nil {
			if err = tx.commit(ctx); err == nil && s.onCommit != nil {
				tx.tell(ctx)
			}
		} else {
			err = tx.failed(ctx, err)
		}
		var retry *errRetry
		if !errors.As(err, &retry) {
			return err
		}
		if attempt == MaxTxAttempts && retry.fn != nil {
			// Its reads kept changing under it: the function's own
			// answer on the last of them is the one there is.
			return retry.fn
		}
		last = err
	}
	return fmt.Errorf("dynamodb: gave up after %d attempts: %w", MaxTxAttempts, last)
}

// Read runs fn over strongly consistent reads. An item read twice is seen
// the same both times (doc.go, "Read").
func (s *Store) Read(ctx context.Context, fn func(tx nextup.Tx) error) error {
	if err := s.check(); err != nil {
		return err
	}
	return fn(s.newTx(false))
}

// Ping checks that the table is there.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.check(); err != nil {
		return err
	}
	_, err := s.api.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &s.table})
	return s.err("describe table "+s.table, err)
}

// Close ends the store's use; the client holds no connection worth
// closing.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

var errClosed = errors.New("dynamodb: store is closed")

func (s *Store) check() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	return nil
}

// backoff waits before try n+1 of something that lost a race or was
// throttled: a few milliseconds growing with n, with full jitter.
func (s *Store) backoff(ctx context.Context, n int) error {
	ceiling := time.Duration(min(n*n, 100)) * 2 * time.Millisecond
	d := time.Duration(rand.Int64N(int64(ceiling) + 1))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// err wraps an error of a call (not a commit).
func (s *Store) err(op string, err error) error {
	if err == nil {
		return nil
	}
	if throttled(err) {
		return &errRetry{err: fmt.Errorf("%s: %w", op, err)}
	}
	return fmt.Errorf("dynamodb: %s: %w", op, err)
}

// commitErr sorts a failed commit: a condition that no longer holds (a
// version changed, an item that should not exist does), a conflict with
// another transaction in flight, or throttling, are worth running the
// function again; anything else is an error.
func (s *Store) commitErr(err error) error {
	var canceled *types.TransactionCanceledException
	if errors.As(err, &canceled) {
		for _, r := range canceled.CancellationReasons {
			switch aws.ToString(r.Code) {
			case "", "None", "ConditionalCheckFailed", "TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded":
			default:
				return fmt.Errorf("dynamodb: commit: %w", err)
			}
		}
		return &errRetry{err: err}
	}
	var ccf *types.ConditionalCheckFailedException
	var tce *types.TransactionConflictException
	if errors.As(err, &ccf) || errors.As(err, &tce) || throttled(err) {
		return &errRetry{err: err}
	}
	return fmt.Errorf("dynamodb: commit: %w", err)
}

// throttled reports the service's "slow down" errors (which the SDK's own
// retries did not get past).
func throttled(err error) bool {
	var pte *types.ProvisionedThroughputExceededException
	var rle *types.RequestLimitExceeded
	if errors.As(err, &pte) || errors.As(err, &rle) {
		return true
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "ThrottlingException", "ProvisionedThroughputExceededException", "RequestLimitExceeded", "Throttling":
			return true
		}
	}
	return false
}

// requestToken is a commit's ClientRequestToken: the SDK's retry of the
// same call (after a timeout, say) is then applied once, not failed by
// its own first success.
func requestToken() (string, error) {
	var b [16]byte
	if _, err := crand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// TxWrites is the most items one transaction writes or checks: the
// service's 100 actions (nextup.Bounded). The use cases split what would
// be more.
func (s *Store) TxWrites() int { return MaxTxActions }

var _ nextup.Bounded = (*Store)(nil)
