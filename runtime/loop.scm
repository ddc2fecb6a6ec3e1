;;; runtime/loop.scm — the standard loop.
;;;
;;; Go calls (run-session instruction) once per run. The profile's run
;;; procedure (default standard-run) drives the model: each model-turn streams
;;; one reply; each tool call goes through (call-tool …), where the Go core's
;;; guard judges it before it runs; results are folded and checked for
;;; progress; a reply without tool calls ends the turn unless the finish check
;;; or the profile's turn-end hook has something to say.
;;;
;;; Budgets and the deadline are enforced in Go: when one runs out the run is
;;; aborted, whatever this code does.

(define (run-session instruction)
  ((profile-ref 'run standard-run) instruction))

(define (system-prompt) ((profile-ref 'system-prompt lean-system-prompt)))

;; The tools the profile offers (its tools setting: profile-tools), with its
;; descriptions: a list of (name . description) pairs; then the MCP tools
;; it offers (its mcp-tools setting; runtime/mcp.scm).
(define (tool-specs)
  (let ((describe (profile-ref 'tool-description lean-tool-description)))
    (mcp-tool-specs (map (lambda (name) (cons name (describe name))) (profile-tools)))))

;; Run one tool call and give its result to the model. Returns #f, or the
;; text the run ends with when the progress guard stops it.
(define (run-call call)
  (let* ((name (call-name call))
         (args (call-arguments call))
         (result (call-tool name args))
         (folded (fold-result name (mcp-result-text name (result-output result) (result-error? result)))))
    (call-with-values
        (lambda () (progress-check name args folded))
      (lambda (text stop)
        (add-tool-result! (call-id call) name text (result-error? result))
        stop))))

;; Run the calls of one reply in order; stop at the first that stops the run,
;; answering the rest so the conversation stays well formed.
(define (run-calls calls)
  (let loop ((calls calls))
    (if (null? calls)
        #f
        (let ((stop (run-call (car calls))))
          (if stop
              (begin
                (for-each (lambda (c)
                            (add-tool-result! (call-id c) (call-name c) "not run: the run stopped" #t))
                          (cdr calls))
                stop)
              (loop (cdr calls)))))))

;; What to say when a turn ends on the model's word, or #f to end it: the
;; profile's reminders first; the finish check only when none is due.
(define (turn-end-message reply)
  (or ((profile-ref 'turn-end (lambda (reply) #f)) reply)
      (finish-check reply)))

(define (standard-run instruction)
  (add-message! 'user instruction)
  (begin-turn!)
  (let loop ()
    (maybe-compact!)
    (let* ((reply (model-turn (system-prompt) (tool-specs)))
           (calls (reply-tool-calls reply)))
      (if (null? calls)
          (let ((more (turn-end-message reply)))
            (if more
                (begin (add-message! 'user more) (loop))
                (finish! 'finished (reply-text reply))))
          (let ((stop (run-calls calls)))
            (if stop
                (finish! 'no-progress stop)
                (loop)))))))

;; The console (nodwyn chat) calls (continue-session text) for each message
;; the person types after the first, on the same conversation: the
;; profile's run procedure adds it and runs the loop, as (run-session text)
;; does for a resumed run. A profile whose run does something only once a
;; session redefines this.
(define (continue-session text)
  (run-session text))
