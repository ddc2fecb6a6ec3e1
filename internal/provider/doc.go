// Package provider holds the model clients nodwyn's loop talks to, behind
// one streaming interface, Model:
//
//	Stream(ctx, Request, onDelta func(Delta)) (Reply, error)
//	Name() string
//
// New(Config) picks one by Config.Provider:
//
//   - "openai": Chat Completions with streaming through
//     github.com/openai/openai-go/v3, at any base URL (OpenAI, proxies, local
//     servers). Tool calls are put together from their streamed fragments
//     (keyed by index, or by id for servers that number every call 0); usage
//     comes from the final chunk (stream_options.include_usage). Requests
//     to api.openai.com send max_completion_tokens, others max_tokens.
//     Only Config's key is sent: what the SDK reads from OPENAI_API_KEY,
//     OPENAI_ORG_ID and OPENAI_PROJECT_ID is dropped, and OPENAI_BASE_URL
//     is overridden, so a key goes only where nodwyn's configuration says.
//   - "anthropic": the Messages API with streaming through
//     github.com/anthropics/anthropic-sdk-go/v2, with no environment
//     defaults (key and URL come from Config). The system prompt, tool use
//     (tool_use blocks, input_json_delta fragments), tool results as
//     tool_result blocks in one user message (consecutive tool messages,
//     and user text after them, merged), prompt-cache breakpoints on the
//     system prompt, the last tool and the last message, and usage with
//     cache reads and writes. max_tokens defaults to DefaultMaxTokens.
//   - "script": a scripted model for tests and the demo (Script; format
//     below).
//
// # Retries
//
// Both HTTP providers retry, with their SDK's own retries turned off, on
// 408, 409, 429 and 5xx statuses, connection errors, an error event in the
// stream, a stream cut before the reply was complete (no finish_reason or
// message_stop), an attempt that received no data for Config.IdleTimeout
// (default 2 min; SSE comments such as ": ping" and Anthropic's ping events
// are not data, so a server that sends only those is cut), and an attempt
// that took longer than Config.RequestTimeout as a whole (default 10 min):
// the whole request is sent again, and onDelta gets a Delta with Restart
// set so a display can drop what it showed. A timed-out attempt's error
// wraps ErrIdleTimeout or ErrRequestTimeout and names the setting to raise. The wait is
// exponential backoff with jitter from Config.RetryBaseWait, or what
// retry-after-ms or Retry-After (seconds or an HTTP date) asks for; at most
// Config.MaxRetries retries and Config.MaxRetryWait of waiting in all, and
// a Retry-After beyond what is left of that ends the retries at once, as
// does a retry due after ctx's deadline. Other
// 4xx statuses are not retried. ctx cancels a wait at once. What fails for
// good is an *Error whose text names the endpoint and the status:
//
//	provider openai: POST http://127.0.0.1:1234/v1/chat/completions: 429 Too Many Requests after 6 attempts: {"error":…}
//
// The status, headers and body are read by a middleware handed to the SDK
// per attempt, so the retry logic does not depend on how an SDK words its
// errors.
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
//
// The package also imports golang.org/x/crypto/x509roots/fallback, so a
// static binary can reach HTTPS endpoints from an image with no CA
// certificates.
package provider
