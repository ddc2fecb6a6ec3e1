;;; runtime/profiles.scm — loop profiles.
;;;
;;; A profile is an alist of settings that the standard loop consults:
;;;   system-prompt     a procedure of no arguments returning the system prompt
;;;   tool-description  a procedure (name) -> the description the model reads
;;;   run               a procedure (instruction) that runs the session
;;;                     (default: standard-run in runtime/loop.scm)
;;;   turn-end          a procedure (reply) -> a message to send, or #f to end
;;;                     the turn (after the finish check has had its say)
;;;   fold-limit        longest tool result, in characters, the model reads whole
;;;   leave-running     #t: a command still running at its time limit is left
;;;                     running in the background (and stopped when the session
;;;                     ends) instead of stopped; the lean profile's choice.
;;;                     Go reads it once, after the init chain has loaded.
;;;   sandbox           the execution seam's [sandbox] settings for this
;;;                     profile: a mode ("working_copy" or "no_sandbox") or an
;;;                     alist ((mode . "working_copy") (checkout . ".")),
;;;                     between config.toml and the contract; it may choose
;;;                     a working copy, never undo one. Read once, like
;;;                     leave-running. Not sandbox mode: see (sandbox?).
;;;   finish-self-check #t: the first time the model says it is done in a
;;;                     working-copy run, the contract's check runs (when it
;;;                     is the person's: (contract-trusted?)) and a failure
;;;                     goes back to the model (runtime/finish.scm);
;;;                     the full profile's choice.
;;;   compact           #f: never compact the conversation (runtime/compact.scm)
;;;   fold-old          #f: when over the threshold, summarize at once rather
;;;                     than first folding older tool results to their heads
;;;   compact-threshold the fraction of the window (less the room kept for
;;;                     the reply) past which the conversation is compacted
;;;   compact-keep      how many of the last messages compaction keeps whole
;;;   tools             the tools the profile offers: a list of names (strings
;;;                     or symbols), of nodwyn's tools and those define-tool
;;;                     defines; those offered here are offered, in the order
;;;                     (tools) lists them. Without it, every tool of (tools).
;;;                     A name that is no tool is an error at the first turn.
;;;
;;; (define-profile 'name settings) registers one; the run picks one by
;;; --profile, NODWYN_PROFILE, [loop] profile in config.toml, or else
;;; (default-profile-name), which a project may redefine.

;;; (define-profile-key! 'key "what it is") declares a setting of a
;;; project's own, which its procedures read with (profile-ref 'key).

(define profiles (make-hash-table))

;; The settings define-profile accepts, with what each value must be: a
;; procedure, a positive integer, or anything (Go checks the sandbox value
;; when it reads it, naming the file and line).
(define profile-keys
  (list (cons 'system-prompt 'procedure) (cons 'tool-description 'procedure)
        (cons 'run 'procedure) (cons 'turn-end 'procedure)
        (cons 'fold-limit 'positive-integer) (cons 'leave-running 'any)
        (cons 'sandbox 'any) (cons 'finish-self-check 'any)
        (cons 'compact 'any) (cons 'fold-old 'any) (cons 'compact-threshold 'any) (cons 'compact-keep 'positive-integer)
        (cons 'tools 'tool-names)))

(define (define-profile-key! key doc)
  (unless (symbol? key)
    (error "define-profile-key!: the key must be a symbol, as in (define-profile-key! 'my-setting \"what it is\")" key))
  (unless (assq key profile-keys)
    (set! profile-keys (append profile-keys (list (cons key 'any)))))
  key)

(define (profile-key-names)
  (map (lambda (k) (symbol->string (car k))) profile-keys))

;; check-profile-settings raises an error that names the profile, the
;; setting and what is accepted: a typo such as fold-limt is caught where
;; the profile is defined, not when a run never reads the setting.
(define (check-profile-settings name settings)
  (unless (list? settings)
    (error (string-append "define-profile " (symbol->string name)
                          ": the settings must be a list of (key . value) pairs")
           settings))
  (for-each
   (lambda (entry)
     (unless (and (pair? entry) (symbol? (car entry)))
       (error (string-append "define-profile " (symbol->string name)
                             ": each setting must be a (key . value) pair with a symbol key")
              entry))
     (let ((kind (assq (car entry) profile-keys)))
       (cond
        ((not kind)
         (error (string-append "define-profile " (symbol->string name) ": unknown setting "
                               (symbol->string (car entry)) "; the settings are "
                               (string-join (profile-key-names) ", ")
                               " (declare a setting of your own first with (define-profile-key! '"
                               (symbol->string (car entry)) " \"what it is\"))")))
        ((and (eq? (cdr kind) 'procedure) (not (procedure? (cdr entry))))
         (error (string-append "define-profile " (symbol->string name) ": "
                               (symbol->string (car entry)) " must be a procedure")
                (cdr entry)))
        ((and (eq? (cdr kind) 'tool-names)
              (not (and (list? (cdr entry))
                        (every (lambda (n) (or (string? n) (symbol? n))) (cdr entry)))))
         (error (string-append "define-profile " (symbol->string name) ": "
                               (symbol->string (car entry)) " must be a list of tool names, as in '(\"fs-read\" \"count-lines\")")
                (cdr entry)))
        ((and (eq? (cdr kind) 'positive-integer)
              (not (and (exact-integer? (cdr entry)) (positive? (cdr entry)))))
         (error (string-append "define-profile " (symbol->string name) ": "
                               (symbol->string (car entry)) " must be a positive whole number")
                (cdr entry))))))
   settings))

(define (define-profile name settings)
  (let ((key (cond ((symbol? name) name)
                   ((string? name) (string->symbol name))
                   (else (error "define-profile: the name must be a symbol, as in (define-profile 'careful settings)" name)))))
    (check-profile-settings key settings)
    (hash-table-set! profiles key settings)
    name))

(define (profile-named name)
  (let ((p (hash-table-ref/default profiles (if (symbol? name) name (string->symbol name)) #f)))
    (or p (error (no-such-profile-message
                  (if (symbol? name) (symbol->string name) name)
                  (map symbol->string (hash-table-keys profiles)))))))

;; no-such-profile-message names the profile asked for and the ones there
;; are, with the one it is a typo of when one is near: the whole message,
;; no irritants (Go adds where the name came from: --profile,
;; NODWYN_PROFILE or the config file's line).
(define (no-such-profile-message name names)
  (let ((near (nearest-name name names))
        (all (string-join names ", ")))
    (if near
        (string-append "no such profile \"" name "\"; did you mean " near "? (the profiles are " all ")")
        (string-append "no such profile \"" name "\"; choose one of " all
                       ", or define it with define-profile in an init.scm"))))

;; nearest-name is the name in names nearest to name when it is near
;; enough to be a typo of it (one edit in a short name, up to a third of
;; its letters in a longer one, as config.Suggest judges a config key),
;; else #f.
(define (nearest-name name names)
  (let loop ((names names) (best #f) (best-d #f))
    (if (null? names)
        (and best (<= best-d (max 1 (quotient (string-length name) 3))) best)
        (let ((d (edit-distance name (car names))))
          (if (or (not best-d) (< d best-d))
              (loop (cdr names) (car names) d)
              (loop (cdr names) best best-d))))))

;; edit-distance counts the letters to add, drop or change, and the
;; neighbours to swap, to make a into b (as config.Suggest counts them).
(define (edit-distance a b)
  (let* ((la (string-length a)) (lb (string-length b))
         (d (make-vector (+ la 1) #f)))
    (define (at i j) (vector-ref (vector-ref d i) j))
    (do ((i 0 (+ i 1))) ((> i la))
      (vector-set! d i (make-vector (+ lb 1) 0))
      (vector-set! (vector-ref d i) 0 i))
    (do ((j 0 (+ j 1))) ((> j lb)) (vector-set! (vector-ref d 0) j j))
    (do ((i 1 (+ i 1))) ((> i la) (at la lb))
      (do ((j 1 (+ j 1))) ((> j lb))
        (let* ((ca (string-ref a (- i 1))) (cb (string-ref b (- j 1)))
               (best (min (+ (at (- i 1) j) 1) (+ (at i (- j 1)) 1)
                          (+ (at (- i 1) (- j 1)) (if (char=? ca cb) 0 1)))))
          (vector-set! (vector-ref d i) j
                       (if (and (> i 1) (> j 1)
                                (char=? ca (string-ref b (- j 2)))
                                (char=? (string-ref a (- i 2)) cb))
                           (min best (+ (at (- i 2) (- j 2)) 1))
                           best)))))))

;; The profile of this run, named by Go from the flag, environment or config,
;; or by (default-profile-name).
(define (default-profile-name)
  (if (unattended?) 'lean 'full))

(define (current-profile-name)
  (let ((chosen (profile-name)))
    (if (string=? chosen "") (default-profile-name) (string->symbol chosen))))

(define (current-profile) (profile-named (current-profile-name)))

(define (profile-ref key . default)
  (let ((hit (assq key (current-profile))))
    (if hit (cdr hit) (if (null? default) #f (car default)))))

;; The tools the current profile offers: its tools setting's names that
;; (tools) lists, in that order, or all of (tools). A name that is no tool
;; nodwyn knows (a typo) is an error naming the profile and the tools.
(define (profile-tools)
  (let ((chosen (profile-ref 'tools #f)))
    (if (not chosen)
        (tools)
        (let ((names (map (lambda (n) (if (symbol? n) (symbol->string n) n)) chosen))
              (known (known-tools)))
          (for-each
           (lambda (n)
             (unless (member n known)
               (error (string-append "profile " (symbol->string (current-profile-name))
                                     ": its tools setting names " n ", which is no tool"
                                     (let ((near (nearest-name n known)))
                                       (if near (string-append "; did you mean " near "?") ""))
                                     " (the tools are " (string-join known ", ")
                                     "; define one with define-tool in an init.scm)"))))
           names)
          (filter (lambda (n) (member n names)) (tools))))))
