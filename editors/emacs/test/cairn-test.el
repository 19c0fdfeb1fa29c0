;;; cairn-test.el --- cairn.el on eglot against the real server, headless  -*- lexical-binding: t; -*-

;; Run by run.sh: emacs -Q --batch -l cairn-test.el
;; env: CAIRN_BIN, CAIRN_EL (the byte-compiled cairn.elc), WS (workspace
;; with calc.go), SCRIPT (scripted model: one run, a two-hunk edit of calc.go)
;;
;; As a user would: `cairn-ask' on a region with a question typed in the
;; minibuffer; the answer streams into *cairn* (Markdown, no ids); the edit
;; opens in a diff buffer; hunk 2 rejected there (it leaves the diff), hunk 1
;; accepted (buffer and disk), then `cairn-undo' (disk back, the hunk named).

;;; Code:
(require 'cl-lib)
(dolist (dir (file-expand-wildcards "/usr/share/emacs/site-lisp/elpa/*"))
  (when (file-directory-p dir) (add-to-list 'load-path dir)))
(require 'eglot)
(load (getenv "CAIRN_EL") nil t)

(defvar cairn-test-passed 0)
(defvar cairn-test-failed 0)
(defvar cairn-test-events nil "Every cairn/runEvent, newest first.")
(defvar cairn-test-snapshots nil "The *cairn* buffer as each text event was shown, newest first.")
(defvar cairn-test-messages nil "Every message shown to the user, newest first.")

(advice-add 'message :around
            (lambda (orig fmt &rest args)
              (let ((m (apply orig fmt args)))
                (when (stringp m) (push m cairn-test-messages))
                m)))

(add-hook 'cairn-run-event-functions
          (lambda (ev)
            (push ev cairn-test-events)
            (when (equal (plist-get ev :kind) "text")
              (push (with-current-buffer (cairn-answer-buffer) (buffer-string)) cairn-test-snapshots))))

(defun cairn-test-out (fmt &rest args)
  (princ (concat (apply #'format fmt args) "\n")))

(defun cairn-test-finish ()
  (cairn-test-out "emacs-cairn.el: %d passed, %d failed" cairn-test-passed cairn-test-failed)
  (when (> cairn-test-failed 0)
    (when (get-buffer "*cairn*")
      (cairn-test-out "--- *cairn*\n%s" (with-current-buffer "*cairn*" (buffer-string))))
    (dolist (b (buffer-list))
      (when (string-match-p "EGLOT.*events\\|stderr" (buffer-name b))
        (cairn-test-out "--- %s (tail)" (buffer-name b))
        (with-current-buffer b
          (cairn-test-out "%s" (buffer-substring-no-properties
                                (max (point-min) (- (point-max) 4000)) (point-max)))))))
  (kill-emacs (if (> cairn-test-failed 0) 1 0)))

(defmacro cairn-test (name &rest body)
  (declare (indent 1))
  `(condition-case err
       (progn ,@body
              (setq cairn-test-passed (1+ cairn-test-passed))
              (cairn-test-out "ok - %s" ,name))
     (error
      (setq cairn-test-failed (1+ cairn-test-failed))
      (cairn-test-out "FAIL - %s: %S" ,name err)
      (cairn-test-finish))))

(defun cairn-test-wait (what pred &optional seconds)
  "Process events until PRED is non-nil, or fail naming WHAT."
  (let ((deadline (+ (float-time) (or seconds 30))) v)
    (while (and (not (setq v (funcall pred))) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (unless v (error "Timed out waiting for %s" what))
    v))

(defun cairn-test-answers ()
  (with-current-buffer (cairn-answer-buffer) (buffer-string)))

(defun cairn-test-has (what text needle)
  (unless (string-match-p (regexp-quote needle) text)
    (error "%s lacks %S:\n%s" what needle (substring-no-properties text))))

(define-derived-mode cairn-test-go-mode prog-mode "CairnGo"
  "A stand-in major mode for .go files (Emacs 28 has no go-mode).")

(setq eglot-confirm-server-initiated-edits nil
      eglot-sync-connect 10
      eglot-autoshutdown nil
      make-backup-files nil)

(defconst cairn-test-ws (file-name-as-directory (getenv "WS")))
(defconst cairn-test-file (expand-file-name "calc.go" cairn-test-ws))
(defun cairn-test-disk ()
  (with-temp-buffer (insert-file-contents cairn-test-file) (buffer-string)))
(defconst cairn-test-original (cairn-test-disk))
(defconst cairn-test-add-fixed (replace-regexp-in-string "a - b" "a + b" cairn-test-original))

;; A server that writes, in one write, the reply to a command and what
;; follows it (a run's event, an approval request), then waits for the
;; approval: nothing more comes until the client answers it.
(defconst cairn-test-coalescing-server "
IFS= read -r h; n=$(printf %s \"$h\" | tr -dc 0-9); IFS= read -r _
body=$(head -c \"$n\"); id=$(printf %s \"$body\" | sed -n 's/.*\"id\":\\([0-9]*\\).*/\\1/p')
r='{\"jsonrpc\":\"2.0\",\"id\":'$id',\"result\":{\"runId\":\"r1\"}}'
e='{\"jsonrpc\":\"2.0\",\"method\":\"cairn/test\",\"params\":{\"kind\":\"toolCall\"}}'
q='{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"window/showMessageRequest\",\"params\":{\"message\":\"approve?\"}}'
printf 'Content-Length: %d\\r\\n\\r\\n%sContent-Length: %d\\r\\n\\r\\n%sContent-Length: %d\\r\\n\\r\\n%s' ${#r} \"$r\" ${#e} \"$e\" ${#q} \"$q\"
cat >/dev/null
")

(cairn-test "a command's reply does not strand what the server wrote with it"
  (let* (got
         (proc (make-process :name "cairn-test-coalescing" :command (list "sh" "-c" cairn-test-coalescing-server)
                             :connection-type 'pipe :coding 'utf-8-emacs-unix :noquery t))
         (conn (make-instance 'jsonrpc-process-connection :name "cairn-test-coalescing" :process proc
                              :notification-dispatcher (lambda (_c m _p) (push m got))
                              :request-dispatcher (lambda (_c m _p) (push m got) '(:title "Deny")))))
    (unwind-protect
        (progn
          (unless (equal (cairn--exec conn "cairn.ask" '(:question "q")) '(:runId "r1"))
            (error "The reply was not read"))
          (cairn-test-wait "the event and the approval request written with the reply"
                           (lambda () (and (memq 'cairn/test got) (memq 'window/showMessageRequest got)))
                           5))
      (jsonrpc-shutdown conn t))))

(find-file cairn-test-file)
(cairn-test-go-mode)
(defvar cairn-test-src (current-buffer))

(cairn-test "eglot connects to cairn serve, declared a Cairn client by cairn.el"
  (eglot '(cairn-test-go-mode) (cons 'transient cairn-test-ws) 'eglot-lsp-server
         (list (getenv "CAIRN_BIN") "serve"
               :initializationOptions
               `(:cairn (:model (:provider "scripted") :scripted (:path ,(getenv "SCRIPT")))))
         "go")
  (let ((server (cairn-test-wait "the eglot server" (lambda () (eglot-current-server)) 20)))
    (unless (cairn--server-p server) (error "cairn--server-p does not see the cairn binary"))
    (let ((caps (eglot-client-capabilities server)))
      (unless (eq (plist-get (plist-get (plist-get caps :experimental) :cairn) :runEvents) t)
        (error "No Cairn capability declared: %S" (plist-get caps :experimental))))))

(defvar cairn-test-diff nil)

(cairn-test "cairn-ask on a region with a minibuffer question: the answer streams into *cairn*"
  (with-current-buffer cairn-test-src
    (transient-mark-mode 1)
    (goto-char (point-min)) (forward-line 3)          ; line 4: func Add
    (push-mark (point) t t)
    (forward-line 3)                                  ; through line 6
    (cl-letf (((symbol-function 'read-string)
               (lambda (prompt &rest _)
                 (unless (string-match-p "region" prompt) (error "Prompt without the region: %s" prompt))
                 "Why is Add wrong? Fix Add and Mul.")))
      (call-interactively #'cairn-ask)))
  ;; Streamed: the text is in *cairn* while the run still goes on.
  (let ((early (cairn-test-wait "\"Let me look.\" in *cairn*"
                                (lambda () (cl-find-if (lambda (s) (string-match-p "Let me look\\." s))
                                                       (reverse cairn-test-snapshots))))))
    (when (string-match-p "-- finished\\|Fixed Add" early)
      (error "The first text was shown only once the run had finished:\n%s" early)))
  (setq cairn-test-diff
        (cairn-test-wait "the diff buffer of the proposed edit" (lambda () (get-buffer "*cairn edit: calc.go*"))))
  (let ((a (cairn-test-answers)))
    (cairn-test-has "*cairn*" a "## Why is Add wrong? Fix Add and Mul.")
    (cairn-test-has "*cairn*" a "*calc.go:4-6*")
    (cairn-test-has "*cairn*" a "> read_file `calc.go`")
    (cairn-test-has "*cairn*" a "> edit proposed to calc.go")
    (cairn-test-has "*cairn*" a "> approval: edit_file allowed by policy")
    (dolist (bad '("run-" "edit-" "cp-" "{" "\""))
      (when (string-match-p (regexp-quote bad) a)
        (error "%S in the answer buffer:\n%s" bad a))))
  (when (cl-some (lambda (m) (string-match-p "Server reports" m)) cairn-test-messages)
    (error "The answer also came as a server message: %S" cairn-test-messages)))

(defun cairn-test-hunks ()
  (with-current-buffer cairn-test-diff
    (let ((n 0) (s (buffer-string)) (i 0))
      (while (string-match "^@@ " s i) (setq n (1+ n) i (match-end 0)))
      n)))

(cairn-test "closed, the diff buffer comes back with cairn-review"
  (kill-buffer cairn-test-diff)
  (with-current-buffer cairn-test-src (call-interactively #'cairn-review))
  (setq cairn-test-diff (or (get-buffer "*cairn edit: calc.go*") (error "cairn-review opened no diff buffer"))))

(cairn-test "the diff buffer shows both hunks; r on hunk 2 rejects it and it leaves the diff"
  (unless (= (cairn-test-hunks) 2)
    (error "Hunks in the diff buffer: %d\n%s" (cairn-test-hunks) (with-current-buffer cairn-test-diff (buffer-string))))
  (with-current-buffer cairn-test-diff
    (unless (derived-mode-p 'diff-mode) (error "Not a diff-mode buffer: %s" major-mode))
    (goto-char (point-min))
    (search-forward "return a * b")
    (call-interactively (key-binding "r")))
  (unless (= (cairn-test-hunks) 1)
    (error "The rejected hunk is still in the diff:\n%s" (with-current-buffer cairn-test-diff (buffer-string))))
  (cairn-test-has "the diff buffer" (with-current-buffer cairn-test-diff (buffer-string)) "hunk 2 of calc.go (line 10): rejected")
  (cairn-test-has "*cairn*" (cairn-test-answers) "Rejected hunk 2 of calc.go (line 10)")
  (unless (equal (cairn-test-disk) cairn-test-original) (error "The reject changed the file")))

(cairn-test "a on hunk 1 accepts it: buffer and disk have it, the file saved"
  (with-current-buffer cairn-test-diff
    (goto-char (point-min))
    (search-forward "return a + b")
    (call-interactively (key-binding "a")))
  (cairn-test-wait "the accepted hunk on disk" (lambda () (equal (cairn-test-disk) cairn-test-add-fixed)))
  (with-current-buffer cairn-test-src
    (unless (equal (buffer-string) cairn-test-add-fixed) (error "Buffer: %s" (buffer-string)))
    (when (buffer-modified-p) (error "The buffer is left unsaved")))
  (cairn-test-has "*cairn*" (cairn-test-answers) "Accepted hunk 1 of calc.go (line 5)")
  (cairn-test-has "the diff buffer" (with-current-buffer cairn-test-diff (buffer-string)) "Every hunk is decided."))

(cairn-test "cairn-undo restores the file and names the hunk it undid"
  (with-current-buffer cairn-test-diff (call-interactively (key-binding "u")))
  (cairn-test-wait "the original on disk" (lambda () (equal (cairn-test-disk) cairn-test-original)))
  (cairn-test-has "*cairn*" (cairn-test-answers) "Undid hunk 1 of calc.go (line 5)")
  (unless (cl-some (lambda (m) (string-match-p "undid hunk 1 of calc.go" m)) cairn-test-messages)
    (error "No message names the undone hunk: %S" (seq-take cairn-test-messages 5))))

(cairn-test "the run's answer ends the section"
  (cairn-test-wait "the finished run" (lambda () (string-match-p "-- finished" (cairn-test-answers))) 60)
  (cairn-test-has "*cairn*" (cairn-test-answers) "Fixed Add and Mul."))

(defun cairn-test--pause-after-ask (_conn &rest msg)
  "After MSG, a request to run cairn.ask, read nothing for a while."
  (when (and (eq (plist-get msg :method) :workspace/executeCommand)
             (equal (plist-get (plist-get msg :params) :command) "cairn.ask"))
    (call-process "sleep" nil nil nil "2")))

(cairn-test "a second run's command is asked about, allowed once, and runs"
  (let ((approved (expand-file-name "approved.txt" cairn-test-ws))
        (asked nil))
    (when (file-exists-p approved) (error "approved.txt exists before the run"))
    ;; The reply to cairn.ask and what the run writes next (its events,
    ;; the approval request) come in one read, as on a busy machine: Emacs
    ;; reads nothing for a moment after sending (a child's wait runs no
    ;; process filter).
    (advice-add 'jsonrpc-connection-send :after #'cairn-test--pause-after-ask)
    ;; eglot answers window/showMessageRequest with completing-read.
    (cl-letf (((symbol-function 'completing-read)
               (lambda (prompt collection &rest _)
                 (push prompt asked)
                 (unless (member "Allow once" collection) (error "No \"Allow once\" in %S" collection))
                 "Allow once")))
      (with-current-buffer cairn-test-src
        (cairn-ask "Create approved.txt."))
      (cairn-test-wait "the run_command call's event"
                       (lambda () (cl-find-if (lambda (ev) (and (equal (plist-get ev :kind) "toolCall")
                                                                (equal (plist-get ev :tool) "run_command")))
                                              cairn-test-events)))
      (cairn-test-wait "approved.txt on disk" (lambda () (file-exists-p approved)))
      (cairn-test-wait "the second run's answer"
                       (lambda () (string-match-p "Created approved\\.txt\\." (cairn-test-answers)))))
    (advice-remove 'jsonrpc-connection-send #'cairn-test--pause-after-ask)
    (unless (cl-some (lambda (p) (string-match-p "touch approved.txt" p)) asked)
      (error "The approval prompt did not name the command: %S" asked))))

(cairn-test "a finished run's usage names cached tokens and the cost"
  (let ((text (cairn--usage-text '(:inputTokens 4000 :outputTokens 100 :cachedInputTokens 3072 :costUSD 0.0072))))
    (unless (equal text "4000 in (3072 cached) / 100 out tokens, $0.0072")
      (error "Usage shown as %S" text)))
  (let ((text (cairn--usage-text '(:inputTokens 5 :outputTokens 2))))
    (unless (equal text "5 in / 2 out tokens")
      (error "Usage without cache or price shown as %S" text))))

(cairn-test-finish)
;;; cairn-test.el ends here
