// Package schedtest is a local stand-in for Amazon EventBridge Scheduler:
// an httptest server speaking the service's REST-JSON wire format
// (CreateSchedule, UpdateSchedule, GetSchedule, DeleteSchedule), for the
// official SDK client pointed at it with BaseEndpoint. It keeps the
// service's rules that nextup relies on (schedule names, the at()
// expression, the required target and time window, one name per group,
// ActionAfterCompletion DELETE, the group must exist) and, instead of a
// clock of its own, fires when the test says what time it is (Fire), as
// early as the service may: from the start of the minute at() names. A test can also lose a
// schedule on purpose (DropNext), as a crash between a commit and the
// schedule's creation would.
package schedtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Schedule is one schedule as the service keeps it.
type Schedule struct {
	Name                  string
	Group                 string
	Expression            string
	Timezone              string
	At                    time.Time // the at() time, in Timezone
	ActionAfterCompletion string
	Target                Target
}

// Target is a schedule's target, as CreateSchedule takes it.
type Target struct {
	Arn              string
	RoleArn          string
	Input            string
	DeadLetterConfig *struct{ Arn string }
	RetryPolicy      *struct {
		MaximumEventAgeInSeconds int
		MaximumRetryAttempts     int
	}
}

// Server is the stand-in. Its methods are safe for concurrent use.
type Server struct {
	*httptest.Server

	mu        sync.Mutex
	groups    map[string]bool
	schedules map[string]Schedule // by group "/" name
	dropNext  int
	calls     map[string]int // API calls by operation
}

// New starts a server with the default schedule group and the groups
// named, closed when the test ends.
func New(t testing.TB, groups ...string) *Server {
	s := &Server{groups: map[string]bool{"default": true}, schedules: map[string]Schedule{}, calls: map[string]int{}}
	for _, g := range groups {
		s.groups[g] = true
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// DropNext makes the next n CreateSchedule calls answer as if they
// succeeded while keeping nothing: the schedule is lost.
func (s *Server) DropNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropNext += n
}

// Schedules returns the schedules there are, soonest first.
func (s *Server) Schedules() []Schedule {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Schedule, 0, len(s.schedules))
	for _, sc := range s.schedules {
		out = append(out, sc)
	}
	slices.SortFunc(out, func(a, b Schedule) int { return a.At.Compare(b.At) })
	return out
}

// Calls returns how many calls of the operation (CreateSchedule, ...)
// the server answered.
func (s *Server) Calls(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[op]
}

// Fire invokes the target of every one-time schedule that may fire at now
// (soonest first): the service fires a schedule within the minute its
// at() names ("at 1:00" is between 1:00:00 and 1:00:59), so one may fire
// from that minute's start, even before the second it names. A schedule
// whose ActionAfterCompletion is DELETE is deleted after its invocation.
// A Lambda target is invoked asynchronously: the service has delivered
// the event whatever the function then does, so an error of invoke (the
// function's) is returned, not kept. It returns how many were fired.
func (s *Server) Fire(ctx context.Context, now time.Time, invoke func(ctx context.Context, sc Schedule) error) (int, error) {
	n := 0
	for _, sc := range s.Schedules() {
		if sc.At.Truncate(time.Minute).After(now) {
			break
		}
		err := invoke(ctx, sc)
		if sc.ActionAfterCompletion == "DELETE" {
			s.mu.Lock()
			delete(s.schedules, sc.Group+"/"+sc.Name)
			s.mu.Unlock()
		}
		n++
		if err != nil {
			return n, fmt.Errorf("schedule %s: %w", sc.Name, err)
		}
	}
	return n, nil
}

var (
	namePattern = regexp.MustCompile(`^[0-9a-zA-Z\-_.]{1,64}$`)
	atPattern   = regexp.MustCompile(`^at\((\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\)$`)
)

// input is CreateSchedule's and UpdateSchedule's body.
type input struct {
	ActionAfterCompletion      string
	ClientToken                string
	FlexibleTimeWindow         *struct{ Mode string }
	GroupName                  string
	ScheduleExpression         string
	ScheduleExpressionTimezone string
	State                      string
	Target                     *Target
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutPrefix(r.URL.Path, "/schedules/")
	if !ok || name == "" {
		fail(w, http.StatusNotFound, "UnknownOperationException", "no such operation: "+r.Method+" "+r.URL.Path)
		return
	}
	op := map[string]string{"POST": "CreateSchedule", "PUT": "UpdateSchedule", "GET": "GetSchedule", "DELETE": "DeleteSchedule"}[r.Method]
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[op]++
	if !namePattern.MatchString(name) {
		fail(w, http.StatusBadRequest, "ValidationException", "1 validation error detected: Value '"+name+"' at 'name' failed to satisfy constraint: Member must satisfy regular expression pattern: [0-9a-zA-Z-_.]+")
		return
	}
	group := r.URL.Query().Get("groupName")
	switch op {
	case "CreateSchedule", "UpdateSchedule":
		var in input
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			fail(w, http.StatusBadRequest, "ValidationException", "body: "+err.Error())
			return
		}
		group = in.GroupName
		if group == "" {
			group = "default"
		}
		if !s.groups[group] {
			fail(w, http.StatusNotFound, "ResourceNotFoundException", "Schedule group "+group+" does not exist.")
			return
		}
		sc, msg := check(name, group, in)
		if msg != "" {
			fail(w, http.StatusBadRequest, "ValidationException", msg)
			return
		}
		k := group + "/" + name
		_, exists := s.schedules[k]
		if op == "CreateSchedule" && exists {
			fail(w, http.StatusConflict, "ConflictException", "Schedule "+name+" already exists.")
			return
		}
		if op == "UpdateSchedule" && !exists {
			fail(w, http.StatusNotFound, "ResourceNotFoundException", "Schedule "+name+" does not exist.")
			return
		}
		if op == "CreateSchedule" && s.dropNext > 0 {
			s.dropNext--
		} else {
			s.schedules[k] = sc
		}
		reply(w, map[string]string{"ScheduleArn": "arn:aws:scheduler:us-east-1:123456789012:schedule/" + group + "/" + name})
	case "GetSchedule", "DeleteSchedule":
		if group == "" {
			group = "default"
		}
		k := group + "/" + name
		sc, exists := s.schedules[k]
		if !exists {
			fail(w, http.StatusNotFound, "ResourceNotFoundException", "Schedule "+name+" does not exist.")
			return
		}
		if op == "DeleteSchedule" {
			delete(s.schedules, k)
			reply(w, map[string]string{})
			return
		}
		reply(w, map[string]any{"Name": sc.Name, "GroupName": sc.Group, "ScheduleExpression": sc.Expression,
			"ScheduleExpressionTimezone": sc.Timezone, "ActionAfterCompletion": sc.ActionAfterCompletion, "State": "ENABLED",
			"Target": sc.Target, "FlexibleTimeWindow": map[string]string{"Mode": "OFF"}})
	default:
		fail(w, http.StatusMethodNotAllowed, "UnknownOperationException", "no such operation: "+r.Method)
	}
}

// check validates a schedule as the service does, for what nextup uses:
// a one-time at() expression in a known time zone, a target with a role,
// a flexible time window.
func check(name, group string, in input) (Schedule, string) {
	sc := Schedule{Name: name, Group: group, Expression: in.ScheduleExpression, Timezone: in.ScheduleExpressionTimezone,
		ActionAfterCompletion: in.ActionAfterCompletion}
	if sc.Timezone == "" {
		sc.Timezone = "UTC"
	}
	loc, err := time.LoadLocation(sc.Timezone)
	if err != nil {
		return sc, "Invalid ScheduleExpressionTimezone " + sc.Timezone
	}
	m := atPattern.FindStringSubmatch(in.ScheduleExpression)
	if m == nil {
		return sc, "Invalid Schedule Expression " + in.ScheduleExpression + " (only one-time at() schedules are kept by this stand-in)"
	}
	if sc.At, err = time.ParseInLocation("2006-01-02T15:04:05", m[1], loc); err != nil {
		return sc, "Invalid Schedule Expression " + in.ScheduleExpression
	}
	if in.FlexibleTimeWindow == nil || (in.FlexibleTimeWindow.Mode != "OFF" && in.FlexibleTimeWindow.Mode != "FLEXIBLE") {
		return sc, "1 validation error detected: Value null at 'flexibleTimeWindow' failed to satisfy constraint: Member must not be null"
	}
	if in.Target == nil || in.Target.Arn == "" || in.Target.RoleArn == "" {
		return sc, "1 validation error detected: target.arn and target.roleArn must not be null"
	}
	switch in.ActionAfterCompletion {
	case "", "NONE", "DELETE":
	default:
		return sc, fmt.Sprintf("Invalid ActionAfterCompletion %q", in.ActionAfterCompletion)
	}
	if len(in.Target.Input) > 8192 {
		return sc, "Target Input is longer than 8192 characters"
	}
	sc.Target = *in.Target
	return sc, ""
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// fail answers as the service does: the error's type in X-Amzn-ErrorType,
// its message in the JSON body.
func fail(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", code)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"Message": msg})
}
