// Package cost is the monthly AWS bill of nextup's reference deployment
// (deploy/aws/template.yaml: Lambda behind a Function URL, DynamoDB
// on-demand, EventBridge Scheduler, SQS, SES, SNS texts, S3, Secrets
// Manager, CloudWatch Logs kept 7 days, an AWS Budget), line by line, for
// a number of waitlist entries a month. `nextup cost` prints it; its
// --help prints the same assumptions as below, from the same code
// (Assumptions.Explain; a test keeps this page and that text agreeing).
// It imports nothing but the standard library: the default binary prices
// the AWS deployment without linking the AWS SDK.
//
// # What an entry brings about
//
// The bill scales with entries: each person who joins a waitlist in the
// month, and what follows from them. The defaults are a hair salon's
// month, where about one person in three on the list ends up with a
// cancelled slot (Defaults):
//
//	joins through the public form                  0.5      the rest are added by staff, the API or an import
//	slots released to the list                     0.3      cancellations handed to the waitlist, per entry
//	offers                                         0.6      each claimed, declined or lapsed:
//	  claimed                                      0.25     a slot filled; the rest of the releases go back to staff
//	  declined                                     0.1      the slot rolls on to the next person
//	  lapsed (the 10-minute window)                0.25     rolls on, or goes back to staff; too short a window for a follow-up
//	reminders per booking                          1.5      a day and an hour before; a slot under a day away gets one
//	status page views                              1        the link in the form's "you're on the list" message
//	claim page views per offer                     0.8      most people open the link
//	staff requests (dashboard pages, API calls)    2
//	forwarded booking requests                     0.1      mail to the inbound address (SES → S3 → the inbox lane)
//
// The messages follow from those, as the use cases send them (a "you're
// on the list" message only for a form join, as web/join.go asks; no
// follow-up of an offer, which needs a window of 30 minutes or more),
// each on the channel the person chose: a text for the --sms-share of
// them, an email otherwise. A text with a link (the status, claim or
// calendar link: about 110 characters on a Function URL, the host and a
// 43-character token) goes in two parts, each billed:
//
//	contact confirmation (form)                    0.5      1 text part
//	you're on the list (form)                      0.5      2 text parts
//	offer                                          0.6      2 text parts
//	hold lapsed                                    0.25     1 text part
//	booked                                         0.25     2 text parts
//	reminder                                       0.375    1 text part
//	emails to staff                                0.15     a slot handed back, a forwarded request to approve
//
// The --sms-share defaults to 0.25: the public form asks for an email,
// the mobile number is optional and "Send offers by" starts on email, so
// most form joins stay on email; people staff add from a phone call come
// with a mobile. Each tenth of the share moves the US bill by about 33
// cents per hundred entries (0.38 text parts per entry, at about 0.85
// cents a part); in the UK, about five times that.
//
// # Fixed costs
//
// Whatever the entries: one Secrets Manager secret (the deployment keeps
// its keys as one JSON object: $0.40 a month, and a read at each cold
// start), the safety sweep every 5 minutes (8,640 Scheduler invocations
// and Lambda invocations a month), the SQS trigger's long polling of the
// empty send queue (about 648,000 ReceiveMessage requests a month:
// approximate, it is Lambda's poller, not ours), the daily housekeeping
// and monthly summary, the sheet mirror every 3 minutes when it is on
// (--sheet-sync: 14,400 more of each), one AWS Budget (an account's first
// two are free), and, to text people in the US or Canada, a number of
// one's own (a toll-free number, about $2 a month; in the UK, Ireland,
// Australia, Germany and France an alphanumeric sender ID costs nothing).
// Not included: CloudWatch alarms, a custom domain in front of the
// Function URL, KMS keys of one's own (the deployment uses the free AWS
// managed ones), taxes.
//
// # Measured figures
//
// DynamoDB request units per use case are the store's own measurement
// (UseCases: the table in aws/store/dynamo/doc.go, and the use cases the
// model adds, measured the same way); aws/internal/capacity measures them
// again in make test and fails when one drifts.
//
// Lambda durations are built from measurements too, since a local
// wall-clock time says little about a 256 MB function: each invocation's
// CPU time, measured on the bootstrap's process by `make coldstart`
// (aws/internal/coldstart) on a full x86-64 core, is stretched 1769/256 ≈
// 6.9 times (Lambda gives a function one vCPU at 1,769 MB and a share of
// one below), and its DynamoDB calls (5 ms each in the region,
// approximate) and SES or SNS sends (60 ms, approximate) are waited out;
// billed by the millisecond, rounded up. Invocations the harness does not
// run (a send, a decline, a reminder, the daily housekeeping, the sheet
// mirror, inbound mail) take a like invocation's CPU, as their comments
// say. A cold start adds the init: 44 ms of CPU measured, stretched the
// same way (an upper bound: Lambda is said to give init more CPU) and a
// Secrets Manager read, about a third of a second, billed since AWS began billing the
// init of every runtime in August 2025. Cold starts are counted as if
// each function's invocations arrived evenly over 12 hours a day and a
// container lived 10 minutes idle (approximate: AWS does not publish it);
// the timer function is kept warm by the 5-minute sweep. Logs are about
// 600 bytes an invocation (Lambda's START, END and REPORT lines, and the
// bootstrap's ~160 bytes measured by make coldstart); a Function URL
// response about 10 KB out; DynamoDB keeps 12 months of history at about
// 16 KB per entry (its offers, messages of 2-4 KB each, audit events and
// index entries), with point-in-time recovery on.
//
// # Prices
//
// Prices (Prices, SMSPrice) are the public list prices on each service's
// pricing page (aws.amazon.com/lambda/pricing, /dynamodb/pricing/on-demand,
// /eventbridge/pricing, /ses/pricing, /end-user-messaging/pricing for SNS
// texts, /s3/pricing, /sqs/pricing, /cloudwatch/pricing,
// /secrets-manager/pricing, /bedrock/pricing, /aws-cost-management/
// aws-budgets/pricing) as of 2026 (PriceDate), for us-east-1, eu-west-1
// and eu-west-2. This package was written on a machine that reaches no
// web page: every price it was not sure of is marked approximate, and
// each line of the bill that uses one carries a ~. Text prices are per
// message part with the carriers' fees, and all approximate: they move
// every few months. DynamoDB's are after the November 2024 on-demand
// price cut. Bedrock is Claude Haiku 4.5 on demand, about 2,000 tokens in
// and 300 out per forwarded mail.
//
// Free tiers are not applied: the bill is what an account past its free
// allowances pays. --free-tier (Assumptions.FreeTier) subtracts the
// always-free monthly allowances (Lambda 1M requests and 400,000 GB-s, SQS
// 1M requests, Scheduler 14M invocations, DynamoDB 25 GB, Logs 5 GB, 100
// GB out), never the first-year ones.
//
// # The seed's figures
//
// The product brief puts the deployment at about $2 a month for 200
// entries and about $13 for 2,000. With the defaults above in us-east-1,
// texting the US, this model gives $4.40 and $19.82 ($88.37 at 10,000):
//
//   - The US number. Since 2023 a text to the US needs a registered number
//     of one's own; a toll-free number is about $2 a month, the seed counts
//     none. Without it the model gives $2.40 and $17.82, near the seed; with
//     no texts at all (--sms-share 0: no number needed), $0.78 and $1.67.
//   - Texts are most of the rest, as the seed says, but nextup sends every
//     message on the person's channel, and a text with a link is two parts:
//     a person on texts gets about 3.8 parts in their month, not one. The
//     model reaches the seed's $13 for 2,000 at an SMS share of about 0.15
//     (two text parts for every three entries), where 200 entries cost
//     $3.75, the number included.
//   - Outside North America texts cost several times as much: texting the
//     UK from eu-west-2, $8.43 and $78.12.
//
// Under the seed's own assumptions, then — texts without a number of one's
// own (--no-sms-number) and a text share of 0.15 — the model gives the
// seed's figures: $1.75 at 200 entries and $11.36 at 2,000
// (TestSeedFiguresReproduced holds them within 15% of $2 and $13).
//
// So the seed's figures hold for a salon that mostly emails; a salon that
// texts a quarter of its messages in the US pays about twice the seed at
// 200 entries (the number) and half as much again at 2,000 (the texts).
// The tests hold the defaults near the seed once the number's line is set
// aside, and name the assumptions that result rests on.
package cost
