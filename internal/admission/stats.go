package admission

import "sync/atomic"

// events are the controller's counters since start.
type events struct {
	admitted, queueFull, refusedDraining, taskConflict, invalidTask       atomic.Uint64
	completed, failed, cancelled                                          atomic.Uint64
	cancelRequests, cancelAccepted, cancelRejected                        atomic.Uint64
	cancelledQueued, cancelledAtBarrier                                   atomic.Uint64
	statusQueries, cancelQueries, resultQueries, resultsServed, forbidden atomic.Uint64
	resultTooLarge, accessChanged, evicted, expired                       atomic.Uint64
	metered, budgetCalls, exceededCalls, exceededBytes                    atomic.Uint64
	budgetBytes                                                           atomic.Int64
}

// LaneStats are one lane's counts.
type LaneStats struct {
	Concurrency int `json:"concurrency"`
	Running     int `json:"running"`
	Queued      int `json:"queued"`
}

// BudgetStats are the read-budget counters.
type BudgetStats struct {
	MaxCalls      int    `json:"maxCalls"`
	MaxBytes      int64  `json:"maxBytes"`
	MeteredReads  uint64 `json:"meteredReads"`
	KernelCalls   uint64 `json:"kernelCalls"`
	DecodedBytes  int64  `json:"decodedBytes"`
	ExceededCalls uint64 `json:"exceededCalls"`
	ExceededBytes uint64 `json:"exceededBytes"`
}

// Stats is the admission part of /health: counts only, never task ids,
// principals or content.
type Stats struct {
	Draining    bool `json:"draining"`
	InFlight    int  `json:"inFlight"`
	MaxInFlight int  `json:"maxInFlight"`
	// Delegated counts calls in flight that a front handed to its authority.
	Delegated             int                  `json:"delegated"`
	Lanes                 map[string]LaneStats `json:"lanes"`
	CancelledRunningReads int                  `json:"cancelledRunningReads"`
	TaskResults           TaskStats            `json:"taskResults"`
	ReadBudget            BudgetStats          `json:"readBudget"`
	Events                map[string]uint64    `json:"events"`
}

// Stats returns a snapshot of the counters.
func (c *Controller) Stats() Stats {
	c.mu.Lock()
	c.tasks.prune(c.lim, c.now(), &c.ev)
	s := Stats{Draining: c.draining, InFlight: c.inFlight, MaxInFlight: c.lim.MaxInFlight, Lanes: map[string]LaneStats{}}
	for _, ln := range []Lane{LaneRead, LaneWrite} {
		l := c.lanes[ln]
		s.Lanes[ln.String()] = LaneStats{Concurrency: l.limit, Running: l.running, Queued: l.waiting}
	}
	for call := range c.calls {
		switch {
		case call.req.Lane == LaneDelegated:
			s.Delegated++
		case call.req.Lane == LaneRead && call.state == StateRunning && call.cancelFlag.Load():
			s.CancelledRunningReads++
		}
	}
	s.TaskResults = TaskStats{Live: len(c.tasks.live), Records: len(c.tasks.done), Bytes: c.tasks.bytes,
		MaxRecords: c.lim.MaxTaskRecords, MaxBytes: c.lim.MaxTaskBytes, MaxResultBytes: c.lim.MaxResultBytes,
		TTLSeconds: int(c.lim.TaskTTL.Seconds())}
	c.mu.Unlock()
	e := &c.ev
	s.ReadBudget = BudgetStats{MaxCalls: c.lim.ReadCalls, MaxBytes: c.lim.ReadBytes, MeteredReads: e.metered.Load(),
		KernelCalls: e.budgetCalls.Load(), DecodedBytes: e.budgetBytes.Load(),
		ExceededCalls: e.exceededCalls.Load(), ExceededBytes: e.exceededBytes.Load()}
	s.Events = map[string]uint64{
		"admitted": e.admitted.Load(), "queueFull": e.queueFull.Load(), "refusedDraining": e.refusedDraining.Load(),
		"taskIdConflicts": e.taskConflict.Load(), "invalidTaskIds": e.invalidTask.Load(),
		"completed": e.completed.Load(), "failed": e.failed.Load(), "cancelled": e.cancelled.Load(),
		"cancelRequests": e.cancelRequests.Load(), "cancelAccepted": e.cancelAccepted.Load(), "cancelRejected": e.cancelRejected.Load(),
		"cancelledBeforeExecution": e.cancelledQueued.Load(), "cancelledAtCommitBarrier": e.cancelledAtBarrier.Load(),
		"taskStatusQueries": e.statusQueries.Load(), "taskCancelQueries": e.cancelQueries.Load(), "taskResultQueries": e.resultQueries.Load(),
		"taskResultsServed": e.resultsServed.Load(), "taskForbidden": e.forbidden.Load(), "taskResultTooLarge": e.resultTooLarge.Load(),
		"taskAccessChanged": e.accessChanged.Load(), "taskRecordsEvicted": e.evicted.Load(), "taskRecordsExpired": e.expired.Load(),
	}
	return s
}
