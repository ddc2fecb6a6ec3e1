;;; prompts/compact.scm — what the model is told when the conversation is
;;; compacted (runtime/compact.scm decides when and what).

(define compact-system-prompt
  "You summarize the first part of a coding agent's session so the agent can go on without it. \
The agent will see your summary in place of those messages, with the task and its latest steps kept as they were. \
Keep what the agent needs and cannot see again: facts found, decisions and why, exact file paths, commands and their outcomes, error messages quoted exactly. \
Drop what no longer matters: dead ends already abandoned, output already acted on.")

;; The request: the transcript of the messages to summarize. Answer in the
;; structure asked, so the agent finds things where it expects them.
(define (compact-prompt transcript)
  (string-append
   "Summarize this part of the session, in these sections:\n"
   "1. Task: what was asked, with any constraints.\n"
   "2. Done: what was done, in order, with the outcome of each step.\n"
   "3. Files: the files changed or created, each with what changed.\n"
   "4. Open problems: what is failing or unknown, with exact error messages.\n"
   "5. Next step: the exact next step the agent was about to take.\n\n"
   "The session so far:\n\n" transcript))

;; The message that stands in for the compacted messages.
(define (compact-summary-message summary)
  (string-append "[Earlier messages of this session were compacted into this summary; the full history is in the session's log.]\n\n" summary))
