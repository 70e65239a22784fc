package coldstart

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The Lambda Runtime API's paths (version 2018-06-01), as documented at
// https://docs.aws.amazon.com/lambda/latest/dg/runtimes-api.html.
const (
	pathNext      = "/2018-06-01/runtime/invocation/next"
	pathInvoke    = "/2018-06-01/runtime/invocation/"
	pathInitError = "/2018-06-01/runtime/init/error"
)

// RuntimeAPI is a Lambda Runtime API of its own for one function
// process: GET .../invocation/next hands over the next event with the
// headers Lambda sends (Lambda-Runtime-Aws-Request-Id,
// Lambda-Runtime-Deadline-Ms, Lambda-Runtime-Invoked-Function-Arn,
// Lambda-Runtime-Trace-Id), and POST .../invocation/{id}/response or
// /error answers it. It records when the first GET next arrived: the end
// of the function's init.
type RuntimeAPI struct {
	srv      *httptest.Server
	queue    chan *invocation
	seq      atomic.Int64
	first    chan struct{}
	firstAt  time.Time
	once     sync.Once
	mu       sync.Mutex
	pending  map[string]*invocation
	initErr  chan string
	arn      string
	deadline time.Duration
}

// invocation is one event on its way to the function and back.
type invocation struct {
	id      string
	payload []byte
	handed  time.Time
	done    chan Result
}

// Result is the function's answer to one event.
type Result struct {
	// Payload is the response body (POST .../response), or the error
	// document (POST .../error).
	Payload []byte
	// Failed says the function reported an error for the event.
	Failed bool
	// Duration is the time from the event handed over (the GET next
	// answered) to the answer received, what Lambda reports and bills as
	// the invocation's duration.
	Duration time.Duration
}

// NewRuntimeAPI starts a Runtime API on a loopback port; Close stops it.
func NewRuntimeAPI() *RuntimeAPI {
	a := &RuntimeAPI{
		queue:    make(chan *invocation, 16),
		first:    make(chan struct{}),
		pending:  map[string]*invocation{},
		initErr:  make(chan string, 1),
		arn:      "arn:aws:lambda:us-east-1:123456789012:function:nextup-coldstart",
		deadline: 30 * time.Second,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+pathNext, a.next)
	mux.HandleFunc("POST "+pathInvoke+"{id}/response", a.answer(false))
	mux.HandleFunc("POST "+pathInvoke+"{id}/error", a.answer(true))
	mux.HandleFunc("POST "+pathInitError, a.initError)
	a.srv = httptest.NewServer(mux)
	return a
}

// Addr is host:port, the value of AWS_LAMBDA_RUNTIME_API.
func (a *RuntimeAPI) Addr() string { return strings.TrimPrefix(a.srv.URL, "http://") }

// Close stops the server.
func (a *RuntimeAPI) Close() { a.srv.Close() }

// First is closed when the first GET next has arrived.
func (a *RuntimeAPI) First() <-chan struct{} { return a.first }

// FirstAt is when the first GET next arrived (after First is closed).
func (a *RuntimeAPI) FirstAt() time.Time { return a.firstAt }

// InitError receives what the function posted to .../init/error.
func (a *RuntimeAPI) InitError() <-chan string { return a.initErr }

func (a *RuntimeAPI) next(w http.ResponseWriter, r *http.Request) {
	now := time.Now() // measurement: the end of init
	a.once.Do(func() {
		a.firstAt = now
		close(a.first)
	})
	var inv *invocation
	select {
	case inv = <-a.queue:
	case <-r.Context().Done():
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Lambda-Runtime-Aws-Request-Id", inv.id)
	h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(time.Now().Add(a.deadline).UnixMilli(), 10))
	h.Set("Lambda-Runtime-Invoked-Function-Arn", a.arn)
	h.Set("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000;Sampled=0")
	inv.handed = time.Now() // measurement: the invocation starts
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(inv.payload)
}

func (a *RuntimeAPI) answer(failed bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		end := time.Now() // measurement: the invocation ends
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		a.mu.Lock()
		inv := a.pending[r.PathValue("id")]
		delete(a.pending, r.PathValue("id"))
		a.mu.Unlock()
		if inv == nil {
			http.Error(w, `{"errorMessage":"unknown request id","errorType":"InvalidRequestID"}`, http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		inv.done <- Result{Payload: body, Failed: failed, Duration: end.Sub(inv.handed)}
	}
}

func (a *RuntimeAPI) initError(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	select {
	case a.initErr <- string(body):
	default:
	}
	w.WriteHeader(http.StatusAccepted)
}

// errExited is an invocation whose function process ended before it
// answered.
var errExited = errors.New("the function process exited")

// Invoke hands payload to the function at its next GET next and waits
// for its answer, until ctx ends or exited is closed (the process died).
func (a *RuntimeAPI) Invoke(ctx context.Context, payload []byte, exited <-chan struct{}) (Result, error) {
	inv := &invocation{id: fmt.Sprintf("req-%06d", a.seq.Add(1)), payload: payload, done: make(chan Result, 1)}
	a.mu.Lock()
	a.pending[inv.id] = inv
	a.mu.Unlock()
	select {
	case a.queue <- inv:
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
	select {
	case res := <-inv.done:
		return res, nil
	case <-exited:
		return Result{}, errExited
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
}
