;;; prompts/messages.scm — what the loop says to the model besides the prompt.
;;;
;;; The session reads some of these by name (continue-message,
;;; refusal-message, not-approved-message, no-such-tool-message,
;;; bad-arguments-message, interrupted-call-result, interrupted-call-not-run,
;;; interrupted-call-stopped, stopped-call-result, person-interrupted-message):
;;; a string, or a procedure it calls with the arguments shown, that returns
;;; one. A project redefines any of them; one that fails or returns no string
;;; is replaced by the built-in text, and a note says so.

;; Said once in sandbox mode, the first time a turn ends on the model's word.
(define sandbox-finish-message
  "Before you finish, check the result as someone who did not watch you work would: run it the way the task will be checked and read what it does. \
Then look for anything that only makes your checks pass, or that came from anywhere but your own work (the task's published solution or answer key, files of whatever runs or checks this session): \
replace it with a real solution, or remove it and say plainly what does not work. \
When that is done, reply with a short summary and no tool call.")

;; Said once, in a working-copy run of a profile with finish-self-check, when
;; the contract's check fails as the model says it is done.
(define (self-check-failed-message output)
  (string-append
   "Before finishing, nodwyn ran the project's check (self-check) in a fresh copy of the folder, and it did not pass:\n\n"
   output
   "\n\nFix what it shows, or if the failure is not yours to fix, say why. Then reply with a short summary and no tool call."))

;; The full profile's reminder when a turn ends with no file changed in a git
;; work tree (never in sandbox mode).
(define no-change-reminder
  "No file has changed. If the task asks for a change, make it now with fs-edit or fs-write; if it needs none, say why in one or two sentences.")

;; Appended after a result when the same call has run n = 4, 8, 12 … times
;; in a row (sandbox mode).
(define (repeat-warning n)
  (format #f "[this exact call has now run ~a times in a row; if you are waiting on something, that is fine; otherwise look at what the results show before running it again]" n))

;; The text a run ends with when the progress guard stops it (not sandbox mode).
(define (no-progress-message n)
  (format #f "stopped: the same call returned the same result ~a times in a row, so the run was making no progress" n))

;; The task of a resumed run given no new instruction.
(define continue-message "Continue the task.")

;; The result of a call the guard refused: checker is who refused, reason
;; what the model should do instead.
(define (refusal-message checker reason)
  (string-append "refused (" checker "): " reason))

;; The result of a call that needed approval and did not get it: answer is
;; how it was answered ("declined (nobody can approve it)", "declined by a
;; person" …).
(define (not-approved-message checker answer reason)
  (string-append "not run: " checker " needed approval and was " answer ": " reason))

;; The result of a call of a tool that is not offered here; tools are the
;; names of those that are.
(define (no-such-tool-message name tools)
  (format #f "there is no tool ~s here; the tools are: ~a" name (string-join tools ", ")))

;; A resumed run answers the calls its last reply made that the interrupted
;; run left unanswered: one that ran with its result, the others with
;; interrupted-call-not-run.
(define (interrupted-call-result output)
  (string-append "this call ran before the session was interrupted; its result:\n" output))
(define interrupted-call-not-run
  "not run: the session was interrupted before this call finished")

;; A resumed run answers a call its log shows started with no result (the
;; session's process was stopped or killed while it ran); ran is how long
;; it had run at least ("3.2 s").
(define (interrupted-call-stopped tool ran)
  (string-append "stopped: this " tool " call started and had run for at least " ran
                 " when the session ended while it ran (its process was stopped or killed); what it printed was not kept. Check what it did before you run it again"))

;; The result of a call the run's end stopped while it ran (Ctrl-C, the
;; deadline, a signal): ran is how long it ran ("3.2 s"), why why it was
;; stopped, output what it had printed until then.
(define (stopped-call-result tool ran why output)
  (string-append "stopped: this " tool " call ran for " ran " and was stopped because " why
                 (if (string-null? (string-trim output))
                     "; it had printed nothing"
                     (string-append "; what it printed until then:\n" output))))

;; The result of a call whose arguments are not one JSON object: problem is
;; what the JSON reader said.
(define (bad-arguments-message tool problem)
  (string-append "arguments for " tool " are not valid JSON (" problem "); send one JSON object"))

;; Added to the conversation when the person interrupts a turn in the
;; console (nodwyn chat, Ctrl-C), after the interrupted calls are answered:
;; the next message comes after it.
(define person-interrupted-message "[the person interrupted you]")
