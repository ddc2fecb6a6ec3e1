package store

import "testing"

// A session's state keeps its endpoint without the password an endpoint
// may carry (the Harbor adapter's test found it in state.json).
func TestEndpointWithoutSecret(t *testing.T) {
	for in, want := range map[string]string{
		"http://gw:pw-canary@127.0.0.1:8080/v1": "http://127.0.0.1:8080/v1",
		"https://user@gw.example/v1":            "https://gw.example/v1",
		"https://api.openai.com/v1":             "https://api.openai.com/v1",
		"":                                      "",
	} {
		if got := EndpointWithoutSecret(in); got != want {
			t.Errorf("EndpointWithoutSecret(%q) = %q, want %q", in, got, want)
		}
	}
}
