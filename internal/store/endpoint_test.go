package store

import "testing"

// A session's state and run.start keep its endpoint without the password
// or the query key an endpoint may carry (the Harbor adapter's test found
// a password in state.json).
func TestEndpointWithoutSecret(t *testing.T) {
	for in, want := range map[string]string{
		"http://gw:pw-canary@127.0.0.1:8080/v1": "http://127.0.0.1:8080/v1",
		"https://user@gw.example/v1":            "https://gw.example/v1",
		"https://api.openai.com/v1":             "https://api.openai.com/v1",
		// a secret in the query; an ordinary parameter stays
		"https://gw.example/v1?api-key=k-canary&api-version=2024-06-01": "https://gw.example/v1?api-version=2024-06-01",
		"https://gw.example/v1?token=t-canary":                          "https://gw.example/v1",
		"https://gw.example/v1?api-version=2024-06-01":                  "https://gw.example/v1?api-version=2024-06-01",
		"": "",
	} {
		if got := EndpointWithoutSecret(in); got != want {
			t.Errorf("EndpointWithoutSecret(%q) = %q, want %q", in, got, want)
		}
	}
}
