package event

// The types, in docs/events.md's order; what each field means is there.
// A field tagged omitempty is one the document says is there only "when …".

// RunStart (run.start): the run begins.
type RunStart struct {
	Session     string      `json:"session"`
	Folder      string      `json:"folder"`
	Profile     string      `json:"profile"`
	Model       string      `json:"model"`
	Provider    string      `json:"provider"`
	BaseURL     string      `json:"base_url,omitempty"`
	API         string      `json:"api,omitempty"`
	Instruction string      `json:"instruction"`
	Scratch     string      `json:"scratch"`
	Sandbox     bool        `json:"sandbox"`
	Unattended  bool        `json:"unattended"`
	Yolo        bool        `json:"yolo"`
	Resumed     bool        `json:"resumed"`
	Exec        string      `json:"exec"`
	Confinement Confinement `json:"confinement"`
	KernelFloor string      `json:"kernel_floor"`
}

// Confinement is run.start's confinement: what is confined, one sentence
// each (the lines under the run's first). Its fields are in the order of
// their json names, so that it marshals as its map does (a trajectory's
// extra holds it as it is).
type Confinement struct {
	Network   string `json:"network"`
	Processes string `json:"processes"`
	Reads     string `json:"reads"`
	Writes    string `json:"writes"`
}

// Message (message): a user message added to the conversation.
type Message struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// ModelRequest (model.request): a request to the model is sent.
type ModelRequest struct {
	Messages  int      `json:"messages"`
	Tools     int      `json:"tools"`
	System    string   `json:"system,omitempty"`
	ToolNames []string `json:"tool_names,omitempty"`
	Retry     string   `json:"retry,omitempty"`
}

// ModelDelta (model.delta): the streamed reply names a tool it calls.
type ModelDelta struct {
	Tool string `json:"tool"`
}

// Usage is the tokens and cost of a request (model.reply, model.aside),
// or of all a run's requests (run.end).
type Usage struct {
	InputTokens      int      `json:"input_tokens"`
	CachedTokens     int      `json:"cached_tokens"`
	CacheWriteTokens int      `json:"cache_write_tokens"`
	OutputTokens     int      `json:"output_tokens"`
	ReasoningTokens  int      `json:"reasoning_tokens"`
	CostUSD          *float64 `json:"cost_usd,omitempty"`
}

// ModelReply (model.reply): the model's reply, complete.
type ModelReply struct {
	Text       string      `json:"text"`
	ToolCalls  []ReplyCall `json:"tool_calls"`
	StopReason string      `json:"stop_reason"`
	Usage
	MS int64 `json:"ms"`
}

// ReplyCall is one of model.reply's tool_calls.
type ReplyCall struct {
	ID           string         `json:"id"`
	Name         string         `json:"name"`
	Arguments    map[string]any `json:"arguments"`
	RawArguments string         `json:"raw_arguments,omitempty"`
}

// ModelAside (model.aside): a request of its own that does not change the
// conversation.
type ModelAside struct {
	Chars int    `json:"chars"`
	Text  string `json:"text"`
	Usage
	MS int64 `json:"ms"`
}

// Compaction (compaction): messages were replaced by a summary.
type Compaction struct {
	From         int `json:"from"`
	To           int `json:"to"`
	Messages     int `json:"messages"`
	TokensBefore int `json:"tokens_before"`
	TokensAfter  int `json:"tokens_after"`
}

// ToolCall (tool.call): a tool call is about to be judged.
type ToolCall struct {
	ID           string         `json:"id"`
	Name         string         `json:"name"`
	N            int            `json:"n"`
	Arguments    map[string]any `json:"arguments"`
	RawArguments string         `json:"raw_arguments,omitempty"`
	Within       string         `json:"within,omitempty"`
}

// ToolDecision (tool.decision): the guard's verdict, and whether the call
// runs.
type ToolDecision struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Decision string `json:"decision"`
	Checker  string `json:"checker"`
	Reason   string `json:"reason"`
	Allowed  bool   `json:"allowed"`
	Answer   string `json:"answer"`
	Within   string `json:"within,omitempty"`
}

// Judge (judge): the judge's answer about an ordinary confirm.
type Judge struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Model        string `json:"model"`
	Answer       string `json:"answer"`
	Reason       string `json:"reason"`
	InputTokens  int    `json:"input_tokens"`
	OutputTokens int    `json:"output_tokens"`
	MS           int64  `json:"ms"`
}

// ToolResult (tool.result): the call's outcome, whether it ran or not.
type ToolResult struct {
	ID      string   `json:"id"`
	Name    string   `json:"name"`
	Error   bool     `json:"error"`
	Exit    int      `json:"exit"`
	Output  string   `json:"output"`
	Changed []string `json:"changed"`
	MS      int64    `json:"ms"`
	Stopped string   `json:"stopped,omitempty"`
	Within  string   `json:"within,omitempty"`
}

// NetConn (net.conn): one connection through the session's egress proxy.
type NetConn struct {
	Host     string `json:"host"`
	Port     int    `json:"port"`
	Method   string `json:"method"`
	Allowed  bool   `json:"allowed"`
	Rule     string `json:"rule"`
	Sent     int64  `json:"sent"`
	Received int64  `json:"received"`
	MS       int64  `json:"ms"`
	Error    string `json:"error,omitempty"`
}

// MCPServer (mcp.server): one MCP server of the run, ready or left out.
type MCPServer struct {
	Server         string   `json:"server"`
	Transport      string   `json:"transport"`
	State          string   `json:"state"`
	Tools          int      `json:"tools"`
	MS             int64    `json:"ms"`
	Origin         string   `json:"origin"`
	Error          string   `json:"error,omitempty"`
	Implementation string   `json:"implementation,omitempty"`
	Stderr         string   `json:"stderr,omitempty"`
	Names          []string `json:"names,omitempty"`
}

// SelfValidation (self_validation): a self-check or run-tests call ran;
// the evidence, as the journal records it.
type SelfValidation struct {
	Tool             string `json:"tool"`
	Check            string `json:"check"`
	Cmd              string `json:"cmd"`
	Exit             int    `json:"exit"`
	Summary          string `json:"summary"`
	WorkdirHash      string `json:"workdir_hash"`
	EvidenceOnly     bool   `json:"evidence_only"`
	VerdictUnchanged bool   `json:"verdict_unchanged"`
	JournalSeq       int64  `json:"journal_seq"`
	JournalError     string `json:"journal_error,omitempty"`
}

// Note (note): something the runtime says for the log.
type Note struct {
	Text string `json:"text"`
}

// Error (error): the loop failed with an error.
type Error struct {
	Text string `json:"text"`
}

// RunEnd (run.end): the run ends.
type RunEnd struct {
	Status        string `json:"status"`
	Text          string `json:"text"`
	ToolCallCount int    `json:"tool_call_count"`
	Usage
	Requests  int   `json:"requests"`
	ElapsedMS int64 `json:"elapsed_ms"`
}

func (RunStart) Type() string       { return "run.start" }
func (Message) Type() string        { return "message" }
func (ModelRequest) Type() string   { return "model.request" }
func (ModelDelta) Type() string     { return "model.delta" }
func (ModelReply) Type() string     { return "model.reply" }
func (ModelAside) Type() string     { return "model.aside" }
func (Compaction) Type() string     { return "compaction" }
func (ToolCall) Type() string       { return "tool.call" }
func (ToolDecision) Type() string   { return "tool.decision" }
func (Judge) Type() string          { return "judge" }
func (ToolResult) Type() string     { return "tool.result" }
func (NetConn) Type() string        { return "net.conn" }
func (MCPServer) Type() string      { return "mcp.server" }
func (SelfValidation) Type() string { return "self_validation" }
func (Note) Type() string           { return "note" }
func (Error) Type() string          { return "error" }
func (RunEnd) Type() string         { return "run.end" }
