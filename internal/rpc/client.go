package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
)

// Client is one connection to a Server.
type Client struct {
	nc net.Conn

	wmu sync.Mutex

	mu      sync.Mutex
	nextID  int64
	pending map[string]chan message
	err     error // why the connection ended
	done    chan struct{}

	notify func(method string, params json.RawMessage)
}

// Dial connects to the server on the socket at path. onNotify, when not
// nil, is called (on the connection's reading goroutine, in order) with
// every notification the server sends.
func Dial(ctx context.Context, path string, onNotify func(method string, params json.RawMessage)) (*Client, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	c := &Client{nc: nc, pending: map[string]chan message{}, done: make(chan struct{}), notify: onNotify}
	go c.read()
	return c, nil
}

// ErrClosed is the error of a call on a connection that has ended.
var ErrClosed = errors.New("rpc: the connection to the daemon has closed")

func (c *Client) read() {
	sc := bufio.NewScanner(c.nc)
	sc.Buffer(make([]byte, 0, 64<<10), MaxMessage)
	var why error = ErrClosed
	for sc.Scan() {
		var m message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			why = fmt.Errorf("rpc: the daemon sent what is not JSON: %w", err)
			break
		}
		if m.Method != "" && len(m.ID) == 0 {
			if c.notify != nil {
				c.notify(m.Method, m.Params)
			}
			continue
		}
		if string(m.ID) == "null" && m.Error != nil {
			why = m.Error // refused at connect, or a message it could not read
			continue
		}
		c.mu.Lock()
		ch := c.pending[string(m.ID)]
		delete(c.pending, string(m.ID))
		c.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
	c.mu.Lock()
	c.err = why
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
	c.mu.Unlock()
	close(c.done)
}

// Call sends method with params and decodes the result into result (nil:
// dropped). An error the server answered with is an *Error.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	b, err := json.Marshal(params)
	if err != nil {
		return err
	}
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	c.nextID++
	id := strconv.FormatInt(c.nextID, 10)
	ch := make(chan message, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.send(message{JSONRPC: Version, ID: json.RawMessage(id), Method: method, Params: b}); err != nil {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return err
	}
	select {
	case m, ok := <-ch:
		if !ok {
			c.mu.Lock()
			err := c.err
			c.mu.Unlock()
			return err
		}
		if m.Error != nil {
			return m.Error
		}
		if result != nil {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return ctx.Err()
	}
}

func (c *Client) send(m message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.nc.Write(append(b, '\n'))
	return err
}

// Done is closed when the connection ends; Err then says why.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err is why the connection ended (nil while it is open).
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close ends the connection.
func (c *Client) Close() error {
	err := c.nc.Close()
	<-c.done
	return err
}
