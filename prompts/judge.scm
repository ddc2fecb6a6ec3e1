;;; prompts/judge.scm — what the judge is told (nodwyn run --judge).
;;;
;;; With --judge, an unattended run's ordinary confirms (a network tool, an
;;; rm -rf, a write outside the folder …) go to a judge model instead of
;;; being declined. runtime/judge.scm decides what the judge sees; these are
;;; its words. The judge's answer is read by nodwyn, not by Scheme: its first
;;; word must be yes or no, and anything else declines. Security confirms
;;; never reach the judge.

(define judge-system-prompt
  "You review one action that an unattended coding agent wants to take. The agent's guard paused it because it needs a person's approval; you decide in that person's place. \
Approve what the task plainly needs and what a careful engineer would do without asking. \
Decline what the task does not need, what reaches beyond the project (other people's machines, accounts, data), what destroys work that cannot be recovered, or what you cannot tell is safe. \
Answer on the first line with one word, yes or no, then one or two sentences saying why. The agent reads your reason when you decline.")

;; The message the judge gets: the task, the last turns and the action.
;; task and turns are text (turns may be ""); call is an alist with tool,
;; arguments (JSON), checker and reason.
(define (judge-prompt task turns call)
  (string-append
   "The task the agent was given:\n" task "\n\n"
   (if (string=? turns "")
       ""
       (string-append "The agent's last steps:\n" turns "\n\n"))
   "The action it wants to take now: the tool " (alist-ref call 'tool "?")
   " with the arguments " (alist-ref call 'arguments "{}") "\n"
   "Why the guard asks (" (alist-ref call 'checker "?") "): " (alist-ref call 'reason "") "\n\n"
   "Should it run? Answer yes or no on the first line, then why."))
