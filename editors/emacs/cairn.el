;;; cairn.el --- Ask Cairn about a region; review its edits hunk by hunk  -*- lexical-binding: t; -*-

;; Version: 0.1
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: tools, languages

;;; Commentary:

;; A small layer on eglot for the Cairn language server (`cairn serve').
;; Plain eglot already works through code actions; this adds:
;;
;; - `cairn-ask': a question of your own about the region (or the file),
;;   read in the minibuffer; the answer streams into the Markdown buffer
;;   *cairn* as the server sends it (`cairn/runEvent').
;; - Each proposed edit opens in a diff buffer (`cairn-diff-mode'):
;;   a / r accept or reject the hunk at point, A / R every pending hunk,
;;   n / p move between hunks, u undoes the last accept.  A decided hunk
;;   leaves the diff; the *cairn* buffer says what was accepted, rejected
;;   or undone, naming the hunk and the file.
;; - `cairn-review': open an edit's diff buffer again.
;; - Approvals keep eglot's prompt; the server lists Deny first, which
;;   eglot 1.9 pre-fills, so a bare RET denies.
;; - `cairn-undo': undo the last edit accepted through this package.
;;
;; Loading it makes eglot declare itself a Cairn client to servers whose
;; program is named "cairn" (`cairn-declare-client'), so the server
;; streams events instead of showing the whole answer in the echo area.

;;; Code:

(require 'cl-lib)
(require 'diff-mode)
(require 'eglot)
(require 'jsonrpc)
(require 'subr-x)

(defgroup cairn nil
  "Cairn, an agent runtime behind a language server."
  :group 'tools
  :prefix "cairn-")

(defcustom cairn-declare-client t
  "Declare eglot a Cairn client to Cairn servers.
A Cairn client gets each run as streamed events (shown by this
package) instead of the answer as one message at the end, and
reviews edits in `cairn-diff-mode' instead of code actions."
  :type 'boolean)

(defcustom cairn-server-program-regexp "\\`cairn\\'"
  "Matches the file name of a Cairn server program (its first word)."
  :type 'regexp)

(defvar cairn-run-event-functions nil
  "Functions called with each `cairn/runEvent' (a plist), after it is shown.")

(defvar cairn-answer-buffer-name "*cairn*"
  "Name of the buffer answers stream into.")

;;;; Declaring the client

(defun cairn--server-p (server)
  "Non-nil when SERVER runs a Cairn program."
  (let* ((proc (ignore-errors (jsonrpc--process server)))
         (cmd (and proc (process-command proc))))
    (and cmd (stringp (car cmd))
         (string-match-p cairn-server-program-regexp
                         (file-name-nondirectory (car cmd))))))

(cl-defmethod eglot-client-capabilities :around (server)
  "Add Cairn's client capability when SERVER is a Cairn server."
  (let ((caps (cl-call-next-method)))
    (if (and cairn-declare-client (cairn--server-p server))
        (plist-put caps :experimental '(:cairn (:runEvents t)))
      caps)))

;;;; State

(cl-defstruct (cairn--run (:constructor cairn--run-create))
  id question where marker (at-line-start t) edits (tools nil) (seq 0))

(defvar cairn--runs (make-hash-table :test #'equal)
  "Run id -> `cairn--run'.")

(defvar cairn--early (make-hash-table :test #'equal)
  "Run id -> events (newest first) that came before the run was known.")

(defvar cairn--seq 0 "How many runs were shown: orders them, newest last.")

(defvar cairn--checkpoints nil
  "Accepted changes, newest first: plists (:server :checkpointId :what :uris).")

(defvar-local cairn--server nil "The eglot server of a Cairn diff buffer.")
(defvar-local cairn--edit-id nil "The edit a Cairn diff buffer shows.")
(defvar-local cairn--edit nil "The last `cairn.getEdit' result of a diff buffer.")

;;;; The answer buffer

(defun cairn-answer-buffer ()
  "The buffer answers stream into."
  (or (get-buffer cairn-answer-buffer-name)
      (with-current-buffer (get-buffer-create cairn-answer-buffer-name)
        (if (fboundp 'markdown-mode) (funcall 'markdown-mode) (text-mode))
        (setq buffer-read-only t)
        (current-buffer))))

(defun cairn--insert (run text)
  "Insert TEXT at the end of RUN's section (at the end when RUN is nil)."
  (with-current-buffer (cairn-answer-buffer)
    (let ((inhibit-read-only t)
          (m (and run (cairn--run-marker run))))
      (save-excursion
        (goto-char (or m (point-max)))
        (insert text)))
    (dolist (w (get-buffer-window-list (current-buffer) nil t))
      (set-window-point w (point-max)))))

(defun cairn--usage-text (u)
  "Describe the usage plist U of a finished run: tokens in (of them
served from the provider's prompt cache) and out, and the cost when
the server priced it."
  (let ((cached (or (plist-get u :cachedInputTokens) 0))
        (cost (plist-get u :costUSD)))
    (format "%d in%s / %d out tokens%s"
            (or (plist-get u :inputTokens) 0)
            (if (> cached 0) (format " (%d cached)" cached) "")
            (or (plist-get u :outputTokens) 0)
            (if (numberp cost) (format ", $%.4f" cost) ""))))

(defun cairn--line (run text)
  "Insert TEXT as a line of its own in RUN's section."
  (cairn--insert run (concat (if (cairn--run-at-line-start run) "" "\n") text "\n"))
  (setf (cairn--run-at-line-start run) t))

(defun cairn--begin (run-id question where)
  "Start RUN-ID's section with QUESTION and WHERE; replay its early events."
  (or (gethash run-id cairn--runs)
      (let ((run (cairn--run-create :id run-id :question question :where where
                                    :seq (setq cairn--seq (1+ cairn--seq)))))
        (with-current-buffer (cairn-answer-buffer)
          (let ((inhibit-read-only t))
            (save-excursion
              (goto-char (point-max))
              (unless (bobp) (insert "\n"))
              (let ((lines (split-string (string-trim question) "\n")))
                (insert "## " (car lines) "\n")
                (dolist (l (cdr lines)) (insert "> " l "\n")))
              (when where (insert "*" where "*\n"))
              (insert "\n")
              (setf (cairn--run-marker run) (copy-marker (point) t)))))
        (puthash run-id run cairn--runs)
        (display-buffer (cairn-answer-buffer))
        (dolist (ev (nreverse (gethash run-id cairn--early)))
          (cairn--show-event run ev))
        (remhash run-id cairn--early)
        run)))

(defun cairn--telling (input)
  "The telling field of a tool INPUT (command, path, query), or nil."
  (cl-loop for k in '(:command :path :query :glob)
           for v = (plist-get input k)
           when (and (stringp v) (not (string-empty-p v)))
           return (truncate-string-to-width (replace-regexp-in-string "[\n`]" " " v) 80 nil nil "…")))

(defun cairn--edit-files (edit)
  "File names of a WorkspaceEdit EDIT (a plist)."
  (let (uris)
    (cl-loop for (uri _) on (plist-get edit :changes) by #'cddr
             do (push (substring (symbol-name uri) 1) uris))
    (cl-loop for dc across (or (plist-get edit :documentChanges) [])
             for u = (or (plist-get (plist-get dc :textDocument) :uri) (plist-get dc :uri))
             when u do (push u uris))
    (mapcar (lambda (u) (file-name-nondirectory (eglot--uri-to-path u)))
            (delete-dups (nreverse uris)))))

(defconst cairn--decisions
  '(("allow_once" . "allowed once") ("allow_session" . "allowed for the session")
    ("deny" . "denied") ("policy_allow" . "allowed by policy") ("policy_deny" . "denied by policy"))
  "Approval decisions, for people.")

(defun cairn--show-event (run ev)
  "Show event EV of RUN in the answer buffer."
  (let ((kind (plist-get ev :kind)))
    (pcase kind
      ("text"
       (let ((d (or (plist-get ev :delta) "")))
         (unless (string-empty-p d)
           (cairn--insert run d)
           (setf (cairn--run-at-line-start run) (string-suffix-p "\n" d)))))
      ("toolCall"
       (push (cons (plist-get ev :callId) (plist-get ev :tool)) (cairn--run-tools run))
       (let ((what (cairn--telling (plist-get ev :input))))
         (cairn--line run (format "> %s%s" (plist-get ev :tool) (if what (format " `%s`" what) "")))))
      ("toolResult"
       (when (eq (plist-get ev :ok) :json-false)
         (cairn--line run (format "> %s failed: %s"
                                  (or (cdr (assoc (plist-get ev :callId) (cairn--run-tools run))) "tool")
                                  (truncate-string-to-width (or (plist-get ev :summary) "") 100 nil nil "…")))))
      ("approval"
       (cairn--line run (format "> approval: %s %s"
                                (or (cdr (assoc (plist-get ev :callId) (cairn--run-tools run))) "tool call")
                                (let ((d (plist-get ev :decision)))
                                  (or (cdr (assoc d cairn--decisions)) d)))))
      ("editProposed"
       (let ((files (cairn--edit-files (plist-get ev :edit))))
         (cairn--line run (format "> edit proposed to %s: review it in its diff buffer (a/r hunk, A/R all)"
                                  (string-join files ", ")))))
      ("finished"
       (let ((u (plist-get ev :usage)))
         (cairn--line run (if (plist-get u :inputTokens)
                              (concat "-- finished - " (cairn--usage-text u))
                            "-- finished"))))
      ("failed"
       (cairn--line run (format "-- failed (%s): %s" (plist-get ev :class) (plist-get ev :error))))
      ("cancelled" (cairn--line run "-- cancelled"))
      ("interrupted" (cairn--line run "-- interrupted")))))

(cl-defmethod eglot-handle-notification
  (server (_method (eql cairn/runEvent)) &rest ev)
  "Show a Cairn run event EV from SERVER."
  (let* ((id (plist-get ev :runId))
         (run (gethash id cairn--runs)))
    (when (and (not run) (equal (plist-get ev :kind) "started")
               (stringp (plist-get ev :question)))
      ;; A run this package did not start (a code action): it says what it is about.
      (setq run (cairn--begin id (plist-get ev :question) (cairn--where ev))))
    (if (not run)
        (push ev (gethash id cairn--early))
      (cairn--show-event run ev)
      (when (equal (plist-get ev :kind) "editProposed")
        (let ((edit-id (plist-get ev :editId)))
          (push edit-id (cairn--run-edits run))
          ;; Not from inside the notification handler: that fetch is a request.
          (run-at-time 0 nil #'cairn--open-edit server edit-id))))
    (run-hook-with-args 'cairn-run-event-functions ev)))

;;;; Asking

(defun cairn--where (ev)
  "The file and lines a `started' event EV is about, for people."
  (let ((uri (plist-get ev :uri))
        (r (plist-get ev :range)))
    (when (stringp uri)
      (concat (file-name-nondirectory (eglot--uri-to-path uri))
              (when r
                (let* ((s (plist-get r :start)) (e (plist-get r :end))
                       (l1 (1+ (plist-get s :line)))
                       ;; A range ending at column 0 ends on the line before.
                       (l2 (if (and (eql (plist-get e :character) 0) (> (plist-get e :line) (plist-get s :line)))
                               (plist-get e :line)
                             (1+ (plist-get e :line)))))
                  (format ":%d-%d" l1 l2)))))))

(defun cairn--server ()
  "The eglot server of this buffer, or an error saying what to do."
  (or cairn--server (eglot-current-server)
      (user-error "No eglot server here: M-x eglot starts `cairn serve'")))

(defun cairn--exec (server command arg)
  "Run Cairn's COMMAND with ARG (a plist) on SERVER; return its result.
Waits for the reply like `jsonrpc-request' but without it: in the
jsonrpc of Emacs 28 that function's reply throws out of the process
filter, and whatever the server wrote in the same read (a run's first
events, its approval request) is left unparsed until the server writes
again, which it does not while it waits for that approval."
  (let (outcome)
    (jsonrpc-async-request
     server :workspace/executeCommand
     `(:command ,command :arguments ,(vector arg))
     :success-fn (lambda (result) (setq outcome (list 'done result)))
     :error-fn (jsonrpc-lambda (&key code message &allow-other-keys)
                 (setq outcome (list 'error code message)))
     :timeout-fn (lambda () (setq outcome (list 'error nil "Timed out"))))
    (while (not outcome)
      (accept-process-output nil 0.05))
    (pcase outcome
      (`(done ,result) result)
      (`(error ,code ,message)
       (signal 'jsonrpc-error
               (list (format "%s failed:" command)
                     (cons 'jsonrpc-error-code code)
                     (cons 'jsonrpc-error-message message)))))))

;;;###autoload
(defun cairn-ask (question &optional beg end)
  "Ask Cairn QUESTION about the region BEG..END (or the whole file).
The answer streams into the *cairn* buffer; proposed edits open in
diff buffers for review."
  (interactive
   (list (read-string (if (use-region-p) "Ask Cairn about the region: " "Ask Cairn about this file: "))
         (and (use-region-p) (region-beginning))
         (and (use-region-p) (region-end))))
  (when (string-empty-p (string-trim question))
    (user-error "Ask a question"))
  (let* ((server (cairn--server))
         (file (or buffer-file-name (user-error "This buffer visits no file")))
         (arg (list :uri (eglot--path-to-uri file) :question question))
         (where (file-name-nondirectory file)))
    (when (and beg end (< beg end))
      (setq arg (plist-put arg :range (list :start (eglot--pos-to-lsp-position beg)
                                            :end (eglot--pos-to-lsp-position end))))
      (setq where (format "%s:%d-%d" where (line-number-at-pos beg)
                          (line-number-at-pos (if (and (> end beg) (eq (char-before end) ?\n)) (1- end) end)))))
    (deactivate-mark)
    (let* ((res (cairn--exec server "cairn.ask" arg))
           (id (plist-get res :runId)))
      (unless id (error "Cairn did not start a run: %S" res))
      (cairn--begin id question where)
      id)))

;;;; Reviewing edits

(defvar cairn-diff-mode-map
  (let ((m (make-sparse-keymap)))
    (define-key m "a" #'cairn-accept-hunk)
    (define-key m "r" #'cairn-reject-hunk)
    (define-key m "A" #'cairn-accept-edit)
    (define-key m "R" #'cairn-reject-edit)
    (define-key m "u" #'cairn-undo)
    (define-key m "n" #'diff-hunk-next)
    (define-key m "p" #'diff-hunk-prev)
    (define-key m "g" #'cairn-diff-refresh)
    (define-key m "q" #'quit-window)
    m)
  "Keys of `cairn-diff-mode'.")

(define-derived-mode cairn-diff-mode diff-mode "Cairn-Diff"
  "A proposed edit of Cairn, hunk by hunk.
\\{cairn-diff-mode-map}"
  ;; diff-mode gives read-only buffers its own single-key map (where r
  ;; narrows, A applies a patch): this mode's keys must win.
  (setq-local minor-mode-overriding-map-alist
              (assq-delete-all 'buffer-read-only (copy-alist minor-mode-overriding-map-alist)))
  (setq buffer-read-only t))

(defun cairn--hunk-name (h)
  "Hunk H (a plist of `cairn.getEdit') named for people."
  (let* ((first (1+ (plist-get h :startLine)))
         (last (max first (plist-get h :endLine))))
    (format "hunk %d of %s (%s)" (1+ (plist-get h :index)) (plist-get h :path)
            (if (= first last) (format "line %d" first) (format "lines %d-%d" first last)))))

(defun cairn--pending-p (h)
  "Non-nil when hunk H waits for a decision."
  (member (plist-get h :state) '("pending" "conflict")))

(defun cairn--render (edit)
  "Fill the current diff buffer from EDIT (a `cairn.getEdit' result)."
  (setq cairn--edit edit)
  (let ((inhibit-read-only t)
        (pt (point))
        (files (mapconcat (lambda (f) (plist-get f :path)) (plist-get edit :files) ", "))
        (pending (cl-remove-if-not #'cairn--pending-p (append (plist-get edit :hunks) nil))))
    (erase-buffer)
    (insert (format "Cairn proposed a change to %s.\n" files))
    (if pending
        (insert "a / r: accept / reject the hunk at point; A / R: every pending hunk; u: undo the last accept\n")
      (insert "Every hunk is decided.\n"))
    (cl-loop for h across (plist-get edit :hunks)
             unless (cairn--pending-p h)
             do (insert (format "%s: %s%s\n" (cairn--hunk-name h) (plist-get h :state)
                                (if (eq (plist-get h :undone) t) " (undone)" ""))))
    (insert "\n")
    (dolist (h pending)
      (let ((start (point)))
        (insert (plist-get h :diff))
        (unless (bolp) (insert "\n"))
        (put-text-property start (point) 'cairn-hunk (plist-get h :index))))
    (goto-char (min pt (point-max)))))

(defun cairn--open-edit (server edit-id)
  "Fetch EDIT-ID from SERVER and show it in its diff buffer."
  (let* ((edit (cairn--exec server "cairn.getEdit" (list :editId edit-id)))
         (files (mapconcat (lambda (f) (file-name-nondirectory (plist-get f :path)))
                           (plist-get edit :files) ", "))
         (buf (get-buffer-create (format "*cairn edit: %s*" files))))
    (with-current-buffer buf
      (cairn-diff-mode)
      (setq cairn--server server
            cairn--edit-id edit-id)
      (cairn--render edit)
      (goto-char (point-min))
      (ignore-errors (diff-hunk-next)))
    (display-buffer buf)
    buf))

(defun cairn-diff-refresh ()
  "Fetch the edit of this diff buffer again."
  (interactive)
  (cairn--render (cairn--exec cairn--server "cairn.getEdit" (list :editId cairn--edit-id))))

(defun cairn--hunk-at-point ()
  "The hunk plist at point, or an error."
  (let ((i (get-text-property (point) 'cairn-hunk)))
    (unless i
      (setq i (save-excursion (ignore-errors (diff-hunk-next)) (get-text-property (point) 'cairn-hunk))))
    (or (and i (cl-find i (plist-get cairn--edit :hunks) :key (lambda (h) (plist-get h :index))))
        (user-error "No pending hunk at point"))))

(defun cairn--uris ()
  "The file URIs of this diff buffer's edit."
  (mapcar (lambda (f) (plist-get f :uri)) (plist-get cairn--edit :files)))

(defun cairn--dirty (uris)
  "The buffers visiting URIS that hold unsaved text of the user's."
  (cl-loop for u in uris
           for b = (find-buffer-visiting (eglot--uri-to-path u))
           when (and b (buffer-modified-p b)) collect b))

(defun cairn--save (uris &optional keep)
  "Save the buffers visiting URIS that an accept or undo changed.
Buffers in KEEP held unsaved text of the user's before: they stay unsaved."
  (dolist (u uris)
    (let ((b (find-buffer-visiting (eglot--uri-to-path u))))
      (when (and b (buffer-modified-p b) (not (memq b keep)))
        (with-current-buffer b (save-buffer))))))

(defun cairn--decide (how hunks what)
  "Accept or reject (HOW) HUNKS (nil: every pending one), called WHAT."
  (let* ((server cairn--server)
         (arg (if hunks (list :editId cairn--edit-id :hunks (vconcat hunks)) (list :editId cairn--edit-id)))
         (uris (cairn--uris))
         (run (cl-find-if (lambda (r) (member cairn--edit-id (cairn--run-edits r)))
                          (hash-table-values cairn--runs))))
    (if (eq how 'accept)
        (let* ((keep (cairn--dirty uris))
               (res (cairn--exec server "cairn.acceptEdit" arg)))
          (unless (eq (plist-get res :applied) t)
            (user-error "Cairn did not apply %s%s" what
                        (if (plist-get res :reason) (concat ": " (plist-get res :reason)) "")))
          (cairn--save uris keep)
          (when (plist-get res :checkpointId)
            (push (list :server server :checkpointId (plist-get res :checkpointId) :what what :uris uris)
                  cairn--checkpoints)))
      (cairn--exec server "cairn.rejectEdit" arg))
    (let ((msg (format "%s %s" (if (eq how 'accept) "Accepted" "Rejected") what)))
      (if run (cairn--line run msg) (cairn--insert nil (concat "\n" msg "\n")))
      (message "Cairn: %s" msg))
    (cairn-diff-refresh)))

(defun cairn-accept-hunk ()
  "Accept the hunk at point."
  (interactive)
  (let ((h (cairn--hunk-at-point)))
    (cairn--decide 'accept (list (plist-get h :index)) (cairn--hunk-name h))))

(defun cairn-reject-hunk ()
  "Reject the hunk at point; it leaves the diff."
  (interactive)
  (let ((h (cairn--hunk-at-point)))
    (cairn--decide 'reject (list (plist-get h :index)) (cairn--hunk-name h))))

(defun cairn--pending-names ()
  "The pending hunks of this diff buffer, named."
  (let ((hs (cl-remove-if-not #'cairn--pending-p (append (plist-get cairn--edit :hunks) nil))))
    (unless hs (user-error "No pending hunk"))
    (mapconcat #'cairn--hunk-name hs ", ")))

(defun cairn-accept-edit ()
  "Accept every pending hunk of this diff buffer's edit."
  (interactive)
  (cairn--decide 'accept nil (cairn--pending-names)))

(defun cairn-reject-edit ()
  "Reject every pending hunk of this diff buffer's edit."
  (interactive)
  (cairn--decide 'reject nil (cairn--pending-names)))

;;;###autoload
(defun cairn-review ()
  "Open the diff buffer of a proposed edit again (the newest by default)."
  (interactive)
  (let* ((server (cairn--server))
         (runs (sort (cl-remove-if-not #'cairn--run-edits (hash-table-values cairn--runs))
                     (lambda (a b) (> (cairn--run-seq a) (cairn--run-seq b)))))
         (choices (cl-loop for r in runs
                           append (cl-loop for id in (cairn--run-edits r)
                                           collect (cons (format "%s (%s)" (cairn--run-question r) id) id)))))
    (unless choices (user-error "Cairn has proposed no edit yet"))
    (let ((pick (if (cdr choices)
                    (completing-read "Review Cairn's edit: " choices nil t nil nil (caar choices))
                  (caar choices))))
      (pop-to-buffer (cairn--open-edit server (cdr (assoc pick choices)))))))

;;;###autoload
(defun cairn-undo ()
  "Undo the last change accepted through this package."
  (interactive)
  (let ((last (or (car cairn--checkpoints) (user-error "No accepted Cairn change to undo"))))
    (let* ((keep (cairn--dirty (plist-get last :uris)))
           (res (cairn--exec (plist-get last :server) "cairn.undo"
                            (list :checkpointId (plist-get last :checkpointId))))
          (what (plist-get last :what)))
      (pop cairn--checkpoints)
      (if (eq (plist-get res :applied) t)
          (progn (cairn--save (plist-get last :uris) keep)
                 (cairn--insert nil (format "\nUndid %s\n" what))
                 (message "Cairn: undid %s" what))
        (message "Cairn: %s was already undone" what))
      (dolist (b (buffer-list))
        (with-current-buffer b
          (when (and (derived-mode-p 'cairn-diff-mode) cairn--edit-id)
            (ignore-errors (cairn-diff-refresh))))))))

(provide 'cairn)
;;; cairn.el ends here
