package mascotstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
)

// Where upstream keeps the mascot's files, relative to the workspace.
const (
	Dir           = "/data/storage/petal/siyuan-plugins-mcp-sisyphus"
	StatsPath     = Dir + "/puppyStats.json"
	EventsPath    = Dir + "/puppyEvents.json"
	AnalyticsPath = Dir + "/analytics.jsonl"
	// RotatedPath takes the analytics file when the next batch would take
	// it past MaxAnalyticsBytes (upstream's 2 MiB), replacing what it held.
	RotatedPath       = AnalyticsPath + ".1"
	MaxAnalyticsBytes = 2 << 20
)

// Stats is puppyStats.json: upstream's four fields, the two this server
// adds for purchases, and any other field a newer writer put there, kept
// as it was.
type Stats struct {
	// TotalCalls counts the calls that earned a coin (upstream's
	// totalEarned); Balance the coins held. A file without balance holds
	// totalCalls coins, as upstream reads it.
	TotalCalls int64
	Balance    int64
	// UpdatedAt is the last write, in Unix milliseconds.
	UpdatedAt int64
	// LastAction is "tool/action" of the last earning call, or
	// "buy:<item>" of the last purchase.
	LastAction string
	// Spent counts every coin spent through this server (the field
	// "spent"); LastPurchase is its latest purchase. Upstream neither
	// writes nor reads them (and drops them when it rewrites the file).
	Spent        int64
	LastPurchase *Purchase

	extra map[string]json.RawMessage
}

// Purchase is the receipt of the latest purchase ("lastPurchase").
type Purchase struct {
	ItemID string `json:"itemId"`
	Cost   int64  `json:"cost"`
	At     int64  `json:"at"`
	// SpentAfter is Stats.Spent right after it: a purchase is on file
	// while spent has reached it.
	SpentAfter int64 `json:"spentAfter"`
}

// fields this package reads and writes, in the order it writes them.
var known = []string{"totalCalls", "balance", "updatedAt", "lastAction", "spent", "lastPurchase"}

// MaxCount is the largest count kept: JavaScript's largest exact integer,
// past which upstream could not count anyway.
const MaxCount = 1<<53 - 1

// count reads a count as upstream does: a number, floored, at least 0
// (at most MaxCount); anything else is 0.
func count(raw json.RawMessage) int64 {
	var f float64
	if json.Unmarshal(raw, &f) != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0
	}
	if f >= MaxCount {
		return MaxCount
	}
	return int64(math.Floor(f))
}

// ParseStats reads puppyStats.json. An empty file is no coins yet. A
// file that is not a JSON object is an error: upstream would start it
// again from zero, which would lose the person's coins, so this server
// refuses to write over it.
func ParseStats(data []byte) (Stats, error) {
	var st Stats
	if len(bytes.TrimSpace(data)) == 0 {
		return st, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil || m == nil {
		return st, fmt.Errorf("%w: not a JSON object: %w", ErrMalformed, errOr(err))
	}
	st.TotalCalls = count(m["totalCalls"])
	if raw, ok := m["balance"]; ok {
		st.Balance = count(raw)
	} else {
		st.Balance = st.TotalCalls
	}
	var ts float64
	if json.Unmarshal(m["updatedAt"], &ts) == nil && !math.IsNaN(ts) && !math.IsInf(ts, 0) {
		st.UpdatedAt = int64(ts)
	}
	_ = json.Unmarshal(m["lastAction"], &st.LastAction)
	st.Spent = count(m["spent"])
	if raw, ok := m["lastPurchase"]; ok {
		var p Purchase
		if json.Unmarshal(raw, &p) == nil && p.ItemID != "" {
			st.LastPurchase = &p
		}
	}
	for _, k := range known {
		delete(m, k)
	}
	if len(m) > 0 {
		st.extra = m
	}
	return st, nil
}

// ErrMalformed is a puppyStats.json that is not upstream's shape.
var ErrMalformed = errors.New("puppyStats.json is malformed")

func errOr(err error) error {
	if err == nil {
		return fmt.Errorf("null")
	}
	return err
}

// Marshal writes the file: upstream's fields first, in upstream's order,
// then this server's, then the others it found, by name.
func (st Stats) Marshal() []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	put := func(k string, v any) {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(v)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	put("totalCalls", st.TotalCalls)
	put("balance", st.Balance)
	put("updatedAt", st.UpdatedAt)
	if st.LastAction != "" {
		put("lastAction", st.LastAction)
	}
	if st.Spent > 0 {
		put("spent", st.Spent)
	}
	if st.LastPurchase != nil {
		put("lastPurchase", st.LastPurchase)
	}
	keys := make([]string, 0, len(st.extra))
	for k := range st.extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		put(k, st.extra[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// Event is puppyEvents.json: upstream keeps only the latest call there
// (one object, not a list), which its mascot shows.
type Event struct {
	Tool       string `json:"tool"`
	Action     string `json:"action"`
	Status     string `json:"status"` // running, success or error
	TotalCalls int64  `json:"totalCalls"`
	Balance    int64  `json:"balance"`
	ItemID     string `json:"itemId,omitempty"`
	ItemLabel  string `json:"itemLabel,omitempty"`
	ItemType   string `json:"itemType,omitempty"`
	ItemEmoji  string `json:"itemEmoji,omitempty"`
	// Seq grows strictly in this process (a running and a success event
	// may share a millisecond); Ts is Unix milliseconds.
	Seq int64 `json:"seq"`
	Ts  int64 `json:"ts"`
}

// The statuses of an Event and a Record.
const (
	Running = "running"
	Success = "success"
	Failed  = "error"
)

// Record is one line of analytics.jsonl, in upstream's shape, without
// what could carry a person's text: no argument names or values, no
// result, no session. ErrorCode is the call's failure code.
type Record struct {
	Seq        int64  `json:"seq"`
	Ts         int64  `json:"ts"`
	Tool       string `json:"tool"`
	Action     string `json:"action"`
	Status     string `json:"status"`
	DurationMs int64  `json:"durationMs"`
	ErrorCode  string `json:"errorCode,omitempty"`
	// ParamKeys is always empty: upstream's readers expect the field.
	ParamKeys []string `json:"paramKeys"`
	// Transport is cli, stdio or http, as upstream counts them.
	Transport string `json:"transport"`
}
