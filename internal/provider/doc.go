// Package provider holds the model clients nodwyn's loop talks to, behind
// one streaming interface, Model:
//
//	Stream(ctx, Request, onDelta func(Delta)) (Reply, error)
//	Name() string
//
// New(Config) picks one by Config.Provider. The HTTP providers are
// nodwyn's own wire layer, with no SDK: an HTTP/1.1 transport that keeps
// one connection and does a request's work on the caller's goroutine
// (transport.go; a request through a proxy goes through net/http's), an
// event-stream parser (sse.go: the WHATWG rules, comments, multi-line data,
// CRLF/LF/CR, events split across reads, a bounded line), one streaming
// POST per attempt (wire.go), and three wire formats on it:
//
//   - "openai" (Config.API "" or "chat"): Chat Completions, POST
//     {base}/chat/completions with stream: true, at any base URL (OpenAI,
//     proxies, local servers). Tool calls are put together from their
//     streamed fragments (keyed by index, or by id for servers that number
//     every call 0); usage comes from the final chunk
//     (stream_options.include_usage), with prompt_tokens_details.cached_tokens
//     and completion_tokens_details.reasoning_tokens. Compat says how a
//     server differs from api.openai.com (max_completion_tokens or
//     max_tokens, the system or developer role, no stream_options, no
//     parallel_tool_calls, no reasoning_effort) and is learnt from a first
//     request's 400 when not given; see Compat. Message.Reasoning is not
//     sent.
//   - "openai" with Config.API "responses" (or Provider "openai-responses"):
//     the Responses API, POST {base}/responses with stream: true and store:
//     false; the system prompt as instructions, the conversation as input
//     items (messages, function_call and function_call_output items keyed
//     by call_id), tools as function tools with strict: false. Reasoning
//     items come back encrypted (include: ["reasoning.encrypted_content"])
//     in Reply.Reasoning and are sent again, unchanged, before the turn's
//     calls; response.incomplete for max_output_tokens ends a reply, usage
//     comes from response.completed (input_tokens_details.cached_tokens,
//     output_tokens_details.reasoning_tokens), response.failed and error
//     events are errors.
//   - "anthropic": the Messages API, POST {base}/v1/messages with stream:
//     true, anthropic-version: 2023-06-01 and x-api-key. The system
//     prompt, tool use (tool_use blocks, input_json_delta fragments), tool
//     results as tool_result blocks in one user message (consecutive tool
//     messages, and user text after them, merged), prompt-cache breakpoints
//     (cache_control ephemeral) on the system prompt, the last two user
//     turns and the last tool (at most four, the API's limit), and usage
//     with cache reads and writes. Thinking blocks (thinking_delta,
//     signature_delta) and redacted_thinking blocks come back in
//     Reply.Reasoning and are sent again, unchanged and first, in the
//     assistant message of later requests. Pings are not data. max_tokens
//     defaults to DefaultMaxTokens.
//   - "script": a scripted model for tests and the demo (Script; format
//     below).
//
// Only Config's key is sent (Authorization: Bearer for OpenAI, x-api-key
// for Anthropic), and only to Config's base URL: no OPENAI_* or
// ANTHROPIC_* variable is read here.
//
// # Reasoning
//
// Config.Reasoning ("low", "medium", "high") asks for a reasoning effort:
// Chat Completions sends reasoning_effort, the Responses API reasoning:
// {effort} (no summary: it needs a verified organization, and nodwyn shows
// none), Anthropic thinking: {type: "enabled", budget_tokens} with 2048,
// 8192 or 16384 tokens (AnthropicThinkingBudget), max_tokens raised to the
// budget plus what it was. A model that refuses the effort is asked again
// without it (Compat.NoReasoningEffort).
//
// What must come back of a turn's reasoning is in Reply.Reasoning; the
// caller keeps it in the assistant message (Reply.Message, or
// Message.Reasoning), which survives a JSON round trip byte for byte, and
// each provider sends back only its own kind of item. With Anthropic
// thinking on, the API requires the thinking blocks of the last assistant
// turn of a tool loop; when that turn has none (a caller that drops
// Message.Reasoning), the request goes without thinking rather than fail.
//
// # Token limits
//
// A reply that reaches its output token limit in its text comes back with
// StopReason "length", "max_tokens" or "max_output_tokens". One that
// reaches it in the middle of a tool call, whose arguments are then cut
// off, is an error that wraps ErrOutputLimit, names the limit and how to
// raise it, and is not retried (the same request would be cut again):
//
//	provider openai: POST …/chat/completions: the reply hit its output token limit (max_tokens = 1000) in the middle of a call to fs-write, whose arguments are cut off; raise the output token limit (max_tokens) or ask for the work in smaller pieces
//
// # Retries
//
// The HTTP providers retry on 408, 409, 429 and 5xx statuses, connection
// errors, an error event in the stream (unless it says the request itself
// is wrong: invalid_request_error, context_length_exceeded), a stream cut
// before the reply was complete (no finish_reason, message_stop or
// response.completed), an attempt that received no byte for
// Config.IdleTimeout (default 2 min), or only SSE comments such as ": ping"
// and Anthropic's ping events with no event of the reply under way (a
// reply that comes a byte at a time is not idle), and an attempt that took longer than Config.RequestTimeout as a
// whole (default 10 min): the whole request is sent again, and onDelta
// gets a Delta with Restart set so a display can drop what it showed. A
// timed-out attempt's error wraps ErrIdleTimeout or ErrRequestTimeout and
// names the setting to raise. The wait is exponential backoff with jitter
// from Config.RetryBaseWait, or what retry-after-ms or Retry-After
// (seconds or an HTTP date) asks for; at most Config.MaxRetries retries
// and Config.MaxRetryWait of waiting in all, and a Retry-After beyond what
// is left of that ends the retries at once, as does a retry due after
// ctx's deadline. Other 4xx statuses are not retried (but a 400 that
// Compat reads as a refused parameter is asked again once, with the
// setting switched). ctx cancels a wait at once. What fails for good is an
// *Error whose text names the endpoint and the status:
//
//	provider openai: POST http://127.0.0.1:1234/v1/chat/completions: 429 Too Many Requests after 6 attempts: {"error":…}
//
// The status, headers and body of each attempt are recorded as they come
// (capture), so the retry logic reads statuses, not error texts. A 200
// with one JSON body (Content-Type application/json: a server that ignored
// stream) is read as the whole reply, in each API's own shape (a Chat
// Completions object, a Responses object, a Messages object); an error in
// such a body is an error that quotes it, retried unless it says the
// request itself is wrong; JSON that is no reply of the API is an error
// that quotes it, not retried. A 200 of another kind whose body holds no
// event at all (a proxy's page) is an error that quotes what came back,
// not retried.
//
// # CA roots
//
// For an http:// base URL nothing CA-related runs. For https:// the
// client's transport settles its roots at its first request: Go's own
// system pool (tls.Config.RootCAs nil) when the system has roots, else the
// roots embedded in the binary (golang.org/x/crypto/x509roots/fallback/bundle),
// so a static binary reaches HTTPS endpoints from an image with no CA
// certificates (roots.go).
//
// # Tool-call arguments
//
// ToolCall.Arguments is the raw text the model sent, malformed or not; a
// provider never fails on it. ParseArgs decodes it into an object, "" as
// {}, and its error is written to be sent back to the model as the call's
// result ("arguments for fs-write are not valid JSON: unexpected end of
// input; send one JSON object"). Malformed arguments sent back to Anthropic
// in the history are wrapped as {"invalid_arguments": "…"}, since its API
// takes only objects there.
//
// # Script files
//
// A script is a text file of replies, consumed one per request
// (docs/script-provider.md has the full description and examples):
//
//	# a comment (a line whose first non-blank character is #)
//	> reply
//	Let me look at the tests.
//	call shell-exec {"command": "go test ./..."}
//
//	> reply if result contains FAIL
//	call fs-edit {"path": "calc.go",
//	              "old": "a - b", "new": "a + b"}
//	> else if result matches ^ok\s
//	The tests pass.
//	> else
//	Something unexpected happened.
//
//	> error 503 upstream overloaded
//	> exhausted
//	All done.
//
// A reply starts with a header line "> reply", optionally "> reply if
// COND", and may be followed by alternatives "> else if COND" and a final
// "> else". The first alternative whose condition holds for the request
// answers it; when none holds, the reply is skipped and the next one tried
// for the same request. COND is
//
//	[not] SUBJECT contains TEXT | matches REGEXP | is error
//
// where SUBJECT is result (the last tool message), results (all tool
// messages after the last assistant message) or message (the last message
// of any role); TEXT may be a Go-quoted string. Regular expressions are
// compiled once, at load.
//
// In a reply's body, "call NAME {JSON}" is a tool call whose arguments must
// be one JSON object (it may go on over several lines until the object is
// complete; no arguments means {}); "rawcall NAME TEXT" sends TEXT as the
// arguments unchecked, to test malformed JSON; every other line is the
// reply's text (blank lines around it dropped). A line starting with a
// backslash is text without it, so "\call …", "\> …" and "\# …" write text
// that would otherwise be read as a call, a header or a comment.
//
// "> error TEXT" is a reply whose Stream fails with TEXT, like a provider
// error. "> exhausted" (last in the file) gives the reply for every
// request after the script has run out; without it that is the text
// "script exhausted" and no tool call, so a run ends cleanly; "> exhausted
// error TEXT" makes running out an error.
//
// LoadScript reads a file once (parse errors name file:line); ParseScript
// parses bytes; NewScript builds one from []ScriptReply in Go.
// Script.Requests returns every request received, for tests to inspect the
// system prompt, tools and messages the loop sent. Its Usage is plausible:
// input tokens are the request's characters (system, messages, tool
// schemas) / 4, output tokens the reply's / 4.
package provider
