package cost

import "time"

// UseCase is what one use case consumes on DynamoDB: read and write
// request units (what on-demand bills) and the calls it makes (what its
// duration waits on). The figures are measured on dynoxide by the store's
// own accounting (dynamo.Store.Measure, ReturnConsumedCapacity), which
// counts index writes as DynamoDB does; aws/internal/capacity measures
// them again in every make test and fails when one drifts.
type UseCase struct {
	// Name is the row of aws/store/dynamo/doc.go's capacity table (InDoc),
	// or what this package measures besides.
	Name        string
	Read, Write float64
	Calls       int
	// InDoc says the figure is one of doc.go's table.
	InDoc bool
	// Var is the Go name of the figure here, for messages.
	Var string
}

// The use cases doc.go's table gives (measured in TestCapacity's steps).
var (
	Join         = UseCase{Name: "join", Read: 9, Write: 23, Calls: 7, InDoc: true, Var: "Join"}
	ReleaseOffer = UseCase{Name: "release → offer", Read: 20.5, Write: 63, Calls: 15, InDoc: true, Var: "ReleaseOffer"}
	Claim        = UseCase{Name: "claim", Read: 14, Write: 66, Calls: 18, InDoc: true, Var: "Claim"}
	// Expiry is doc.go's "expiry → roll on / hand back": a 2-hour sweep
	// after an unclaimed offer, which runs the offer's follow-up, its
	// expiry and the hand-back, and an earlier booking's first reminder.
	// The model prices those timers one by one (below) instead.
	Expiry = UseCase{Name: "expiry → roll on / hand back", Read: 47, Write: 98, Calls: 43, InDoc: true, Var: "Expiry"}
)

// The use cases the model adds, measured one at a time by
// aws/internal/capacity.
var (
	// FormJoin is a join through the public form: its checks, the
	// confirmation message, and the join with its "you're on the list"
	// message.
	FormJoin = UseCase{Name: "join by the form", Read: 13.5, Write: 39, Calls: 13, Var: "FormJoin"}
	// Decline is a decline that rolls the slot on to the next person.
	Decline = UseCase{Name: "decline → roll on", Read: 32.5, Write: 96, Calls: 26, Var: "Decline"}
	// StatusPage and ClaimPage are GETs of a person's status page and of
	// an offer's claim page (reads, and the claim page's "opened" mark).
	// The status page reads the rows since the person joined, to say why
	// the slots that came up went to someone else (insight.PassedOver).
	StatusPage = UseCase{Name: "status page", Read: 12, Write: 0, Calls: 8, Var: "StatusPage"}
	ClaimPage  = UseCase{Name: "claim page", Read: 6, Write: 11, Calls: 8, Var: "ClaimPage"}
	// ExpiryTimer and ReminderTimer are one timer each, run by the timer
	// function: an offer's expiry (rolling on to the next person), and a
	// booking's reminder.
	ExpiryTimer   = UseCase{Name: "expiry timer → roll on", Read: 40.5, Write: 109, Calls: 33, Var: "ExpiryTimer"}
	ReminderTimer = UseCase{Name: "reminder timer", Read: 11.5, Write: 24, Calls: 15, Var: "ReminderTimer"}
	// Send is one outbox message sent, the average over the messages of a
	// salon's round: measured as the relay's round of one (the due query,
	// the claim, the outcome); the SQS consumer claims by id instead, a
	// query less.
	Send = UseCase{Name: "send one message", Read: 8, Write: 10.5, Calls: 6, Var: "Send"}
	// IdleSweep is the safety sweep finding nothing due: a query of the
	// due timers and one of the due messages.
	IdleSweep = UseCase{Name: "idle sweep", Read: 1, Write: 0, Calls: 2, Var: "IdleSweep"}
)

// UseCases lists every figure above.
func UseCases() []UseCase {
	return []UseCase{Join, ReleaseOffer, Claim, Expiry, FormJoin, Decline, StatusPage, ClaimPage, ExpiryTimer, ReminderTimer, Send, IdleSweep}
}

// Invocation is one kind of Lambda invocation as the model prices it.
type Invocation struct {
	Name string
	// CPU is the function's CPU time for it on a full x86-64 core, as
	// `make coldstart` (aws/internal/coldstart) measures the bootstrap's
	// process; Measured says it was (else it is an estimate from a like
	// invocation, named in its comment).
	CPU      time.Duration
	Measured bool
	// Calls is the DynamoDB calls it waits on (its use case's, above);
	// Providers the SES or SNS sends; Other any other wait (an estimate,
	// named where set).
	Calls, Providers int
	Other            time.Duration
}

// The invocations priced. CPU figures: `make coldstart`, 20 rounds,
// medians, on a quiet machine (under other load they came out up to half
// again higher); the expiry is one sample, after a warming request.
var (
	InvJoin      = Invocation{Name: "join (Function URL)", CPU: 2800 * time.Microsecond, Measured: true, Calls: Join.Calls}
	InvPage      = Invocation{Name: "status page or staff request (Function URL)", CPU: 1400 * time.Microsecond, Measured: true, Calls: StatusPage.Calls}
	InvClaimPage = Invocation{Name: "claim page (Function URL)", CPU: 2800 * time.Microsecond, Measured: true, Calls: ClaimPage.Calls}
	InvRelease   = Invocation{Name: "release → offer (Function URL)", CPU: 5300 * time.Microsecond, Measured: true, Calls: ReleaseOffer.Calls}
	InvClaim     = Invocation{Name: "claim (Function URL)", CPU: 5300 * time.Microsecond, Measured: true, Calls: Claim.Calls}
	InvExpiry    = Invocation{Name: "timer: an offer's expiry", CPU: 28700 * time.Microsecond, Measured: true, Calls: ExpiryTimer.Calls}
	InvSweep     = Invocation{Name: "timer: the sweep, nothing due", CPU: 500 * time.Microsecond, Measured: true, Calls: IdleSweep.Calls}

	// InvFormStep is each of a form join's three requests (the form, its
	// POST, the confirmation link): a join's CPU, a third of its calls.
	InvFormStep = Invocation{Name: "form join, each of its 3 requests (Function URL)", CPU: 2800 * time.Microsecond, Calls: FormJoin.Calls / 3}
	// InvDecline: a claim's CPU.
	InvDecline = Invocation{Name: "decline → roll on (Function URL)", CPU: 5300 * time.Microsecond, Calls: Decline.Calls}
	// InvReminder: a release's CPU (it composes and queues a message).
	InvReminder = Invocation{Name: "timer: a booking's reminder", CPU: 5300 * time.Microsecond, Calls: ReminderTimer.Calls}
	// InvSend: a join's CPU, and the SES or SNS call.
	InvSend = Invocation{Name: "send one message (SQS)", CPU: 2800 * time.Microsecond, Calls: Send.Calls, Providers: 1}
	// InvHousekeeping: the daily purges and expiries, a few dozen calls.
	InvHousekeeping = Invocation{Name: "timer: housekeeping", CPU: 20 * time.Millisecond, Calls: 50}
	// InvSheetSync: fetching the sheet from Google (about 400 ms) and
	// comparing it.
	InvSheetSync = Invocation{Name: "timer: sheet mirror", CPU: 5 * time.Millisecond, Calls: 4, Other: 400 * time.Millisecond}
	// InvInbound: reading the mail from S3 (about 30 ms), parsing it, and
	// a proposal (a form join's calls).
	InvInbound = Invocation{Name: "inbound mail (S3)", CPU: 10 * time.Millisecond, Calls: FormJoin.Calls, Other: 30 * time.Millisecond}
	// InvFeedback: an SES bounce or complaint becomes a suppression.
	InvFeedback = Invocation{Name: "mail feedback (SNS)", CPU: time.Millisecond, Calls: 3}
)

// BedrockLatency is how long the inbound function waits for the model's
// answer when the model parser is on (an estimate).
const BedrockLatency = 2 * time.Second

// InitCPU is the bootstrap's init CPU time, measured as the invocations'
// (`make coldstart`: exec to the first GET next, 20 starts, median), and
// SecretsLatency the Secrets Manager read the deployment's init adds (an
// estimate).
const (
	InitCPU        = 44 * time.Millisecond
	SecretsLatency = 30 * time.Millisecond
)

// InitDuration is a cold start's billed init on Lambda: the init CPU
// stretched to a 256 MB function's share of a vCPU (an upper bound: init
// is reported to get more) and the secret's read.
func InitDuration() time.Duration {
	cpu := float64(InitCPU)
	return time.Duration(cpu*cpuScale) + SecretsLatency
}
