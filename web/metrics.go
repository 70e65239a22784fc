package web

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/outbox"
)

// Metrics are the Prometheus metrics an operator watches: requests,
// promotion lag from a freed slot to its offer, timer lateness, claims by
// outcome, and the outbox: its depth by channel and state, and per channel
// the messages sent, the failures (failed, to be retried, or dead), how
// long the provider took and how long a message waited to be sent.
type Metrics struct {
	reg           *prometheus.Registry
	requests      *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	claims        *prometheus.CounterVec
	promotionLag  prometheus.Histogram
	offerSendLag  *prometheus.HistogramVec
	timerLateness *prometheus.HistogramVec
	sent          *prometheus.CounterVec
	failures      *prometheus.CounterVec
	sendDuration  *prometheus.HistogramVec
	queueLatency  *prometheus.HistogramVec
	outbox        *outboxCollector
}

// NewMetrics registers nextup's metrics (and the Go runtime's) on a
// registry of their own; the outbox depth is read from the store at scrape.
func NewMetrics(store nextup.Store) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		outbox: &outboxCollector{store: store,
			desc: prometheus.NewDesc("nextup_outbox_messages", "Outbox messages by channel and state.", []string{"channel", "state"}, nil),
			backlog: prometheus.NewDesc("nextup_outbox_backlog",
				"Messages waiting to be sent (queued, or failed and to be tried again), by channel.", []string{"channel"}, nil),
			drain: prometheus.NewDesc("nextup_outbox_drain_seconds",
				"The backlog over the channel's sending rate: how long the messages waiting now take to go out (channels with a rate only).", []string{"channel"}, nil)},
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "nextup_http_requests_total",
			Help: "HTTP requests by route pattern and status."}, []string{"route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "nextup_http_request_duration_seconds",
			Help: "HTTP request latency by route pattern.", Buckets: prometheus.DefBuckets}, []string{"route"}),
		claims: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "nextup_claims_total",
			Help: "Claim attempts by outcome: booked, repeat, or the conflict code."}, []string{"outcome"}),
		promotionLag: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "nextup_promotion_lag_seconds",
			Help: "From a freed slot (release, cancellation, resize) to each of its offers committed: one sample per offer, so a release of many seats shows its tail.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 14)}),
		offerSendLag: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "nextup_offer_send_lag_seconds",
			Help:    "From an offer's message due (the offer committed, or the end of quiet hours) to handed to the provider, by channel: the wait a storm's pacing adds.",
			Buckets: prometheus.ExponentialBuckets(0.1, 2, 18)}, []string{"channel"}),
		timerLateness: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "nextup_timer_lateness_seconds",
			Help: "How long after its due time a timer was handled.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 14)}, []string{"kind"}),
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "nextup_outbox_sent_total",
			Help: "Outbox messages sent, by channel."}, []string{"channel"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "nextup_outbox_failures_total",
			Help: "Outbox send attempts that failed, by channel and outcome: failed (to be retried) or dead."}, []string{"channel", "outcome"}),
		sendDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "nextup_outbox_send_duration_seconds",
			Help: "How long the provider took to answer a send, by channel.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 12)}, []string{"channel"}),
		queueLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "nextup_outbox_queue_latency_seconds",
			Help:    "From when a message was due (created, or the end of quiet hours) to sent, retries and pacing included, by channel.",
			Buckets: prometheus.ExponentialBuckets(0.1, 2, 18)}, []string{"channel"}),
	}
	m.reg.MustRegister(m.requests, m.duration, m.claims, m.promotionLag, m.offerSendLag, m.timerLateness,
		m.sent, m.failures, m.sendDuration, m.queueLatency,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.outbox)
	return m
}

// SetSendRates tells the metrics each channel's sending rate (messages a
// second, the relay's Limits), so that the outbox backlog comes with the
// time expected to drain it.
func (m *Metrics) SetSendRates(rates map[nextup.Channel]float64) {
	if m != nil {
		m.outbox.setRates(rates)
	}
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler { return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}) }

// TimerHandled records a timer's lateness; wire it to timer.Sweeper.OnHandled.
func (m *Metrics) TimerHandled(t nextup.Timer, late time.Duration) {
	m.timerLateness.WithLabelValues(t.Kind).Observe(max(late, 0).Seconds())
}

// OutboxAttempt records a send attempt of the outbox relay; wire it to
// outbox.Relay.OnAttempt. The queue latency is in the relay's Clock's
// time, the provider's duration in wall time.
func (m *Metrics) OutboxAttempt(a outbox.Attempt) {
	ch := string(a.Message.Channel)
	if a.Call > 0 {
		m.sendDuration.WithLabelValues(ch).Observe(a.Call.Seconds())
	}
	switch a.State {
	case nextup.MessageSent:
		m.sent.WithLabelValues(ch).Inc()
		m.queueLatency.WithLabelValues(ch).Observe(max(a.Queued(), 0).Seconds())
		if a.Message.Kind == nextup.MessageOffer {
			m.offerSendLag.WithLabelValues(ch).Observe(max(a.Queued(), 0).Seconds())
		}
	case nextup.MessageFailed, nextup.MessageDead:
		m.failures.WithLabelValues(ch, string(a.State)).Inc()
	}
}

func (m *Metrics) claim(outcome string) {
	if m != nil {
		m.claims.WithLabelValues(outcome).Inc()
	}
}

// Promoted records the promotion lag of each offer among moves, made by
// work that began at since: a bulk release's job reports each part so
// (waitlist's Config.Promoted).
func (m *Metrics) Promoted(moves []nextup.Move, since time.Time) { m.promoted(moves, since) }

func (m *Metrics) promoted(moves []nextup.Move, since time.Time) {
	if m == nil {
		return
	}
	lag := time.Since(since).Seconds() // wall time: a measurement, not logic
	for _, mv := range moves {
		if mv.Move == nextup.MoveOffer || mv.Move == nextup.MoveRollOn {
			m.promotionLag.Observe(lag)
		}
	}
}

// instrument counts and times every request by its route pattern.
func (m *Metrics) instrument(next http.Handler) http.Handler {
	if m == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		route := r.Pattern
		if route == "" || route == "/" {
			route = "unmatched"
		}
		m.requests.WithLabelValues(route, strconv.Itoa(sw.status)).Inc()
		m.duration.WithLabelValues(route).Observe(time.Since(start).Seconds())
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// outboxCollector reads the outbox depth from the store at scrape time:
// every state of the channels nextup sends on, and of any other channel
// the outbox holds, so that a series does not vanish when it empties.
type outboxCollector struct {
	store          nextup.Store
	desc           *prometheus.Desc
	backlog, drain *prometheus.Desc
	mu             sync.Mutex
	rates          map[nextup.Channel]float64
}

func (c *outboxCollector) setRates(rates map[nextup.Channel]float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rates = maps.Clone(rates)
}

func (c *outboxCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.desc
	ch <- c.backlog
	ch <- c.drain
}

func (c *outboxCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var counts map[nextup.Channel]map[nextup.MessageState]int
	err := c.store.Read(ctx, func(tx nextup.Tx) error {
		var err error
		counts, err = tx.MessageCounts(ctx, "")
		return err
	})
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	channels := []nextup.Channel{nextup.ChannelEmail, nextup.ChannelSMS, nextup.ChannelWebhook}
	for channel := range counts {
		if !slices.Contains(channels, channel) {
			channels = append(channels, channel)
		}
	}
	c.mu.Lock()
	rates := c.rates
	c.mu.Unlock()
	for _, channel := range channels {
		for _, st := range []nextup.MessageState{nextup.MessageQueued, nextup.MessageSent, nextup.MessageFailed, nextup.MessageDead, nextup.MessageCancelled} {
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(counts[channel][st]), string(channel), string(st))
		}
		waiting := Backlog(counts, channel)
		ch <- prometheus.MustNewConstMetric(c.backlog, prometheus.GaugeValue, float64(waiting), string(channel))
		if r := rates[channel]; r > 0 {
			ch <- prometheus.MustNewConstMetric(c.drain, prometheus.GaugeValue, float64(waiting)/r, string(channel))
		}
	}
}

// Backlog is how many of a channel's messages wait to be sent: queued,
// or failed and to be tried again.
func Backlog(counts map[nextup.Channel]map[nextup.MessageState]int, ch nextup.Channel) int {
	return counts[ch][nextup.MessageQueued] + counts[ch][nextup.MessageFailed]
}
