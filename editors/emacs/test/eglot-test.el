;;; eglot-test.el --- Cairn through plain LSP: Emacs + eglot, headless  -*- lexical-binding: t; -*-

;; Run by run.sh: emacs -Q --batch -l eglot-test.el
;; env: CAIRN_BIN, WS (workspace with hello.go), SCRIPT (scripted model)
;;
;; Uses standard LSP only: textDocument/codeAction offers "Explain this
;; code", whose command (cairn.ask) runs; the run's proposed edit is accepted
;; with workspace/executeCommand cairn.acceptEdit, the server sends
;; workspace/applyEdit, and the file changes.

;;; Code:
(require 'cl-lib)
(dolist (dir (file-expand-wildcards "/usr/share/emacs/site-lisp/elpa/*"))
  (when (file-directory-p dir) (add-to-list 'load-path dir)))
(require 'eglot)

(defvar cairn-test-passed 0)
(defvar cairn-test-failed 0)
(defvar cairn-test-events nil "Every cairn/runEvent, newest first.")

(defun cairn-test-out (fmt &rest args)
  (princ (concat (apply #'format fmt args) "\n")))

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

(defun cairn-test-finish ()
  (cairn-test-out "emacs-eglot: %d passed, %d failed" cairn-test-passed cairn-test-failed)
  (when (> cairn-test-failed 0)
    (let ((ev (get-buffer (format "*EGLOT (%s) events*" "ws"))))
      (dolist (b (buffer-list))
        (when (string-match-p "EGLOT.*events\\|stderr" (buffer-name b))
          (cairn-test-out "--- %s (tail)" (buffer-name b))
          (with-current-buffer b
            (cairn-test-out "%s" (buffer-substring-no-properties
                                  (max (point-min) (- (point-max) 4000)) (point-max))))))
      (ignore ev)))
  (kill-emacs (if (> cairn-test-failed 0) 1 0)))

(defun cairn-test-wait (what pred &optional seconds)
  "Process events until PRED is non-nil, or fail naming WHAT."
  (let ((deadline (+ (float-time) (or seconds 30))) v)
    (while (and (not (setq v (funcall pred))) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (unless v (error "Timed out waiting for %s" what))
    v))

(cl-defmethod eglot-handle-notification
  (_server (_method (eql cairn/runEvent)) &rest params)
  (push params cairn-test-events))

(define-derived-mode cairn-test-go-mode prog-mode "CairnGo"
  "A stand-in major mode for .go files (Emacs 28 has no go-mode).")

(setq eglot-confirm-server-initiated-edits nil
      eglot-sync-connect 10
      eglot-autoshutdown nil
      make-backup-files nil)

(defconst cairn-test-ws (file-name-as-directory (getenv "WS")))
(defconst cairn-test-file (expand-file-name "hello.go" cairn-test-ws))
(defconst cairn-test-original
  (with-temp-buffer (insert-file-contents cairn-test-file) (buffer-string)))

(defun cairn-test-run-events (run-id)
  (cl-remove-if-not (lambda (e) (equal (plist-get e :runId) run-id))
                    (reverse cairn-test-events)))

(defun cairn-test-event (run-id kind)
  (cl-find-if (lambda (e) (equal (plist-get e :kind) kind))
              (cairn-test-run-events run-id)))

(defvar cairn-test-server nil)
(defvar cairn-test-run nil)
(defvar cairn-test-edit nil)

(find-file cairn-test-file)
(cairn-test-go-mode)

(cairn-test "eglot connects to cairn serve"
  (let ((project (cons 'transient cairn-test-ws))
        (process-environment
         (append (list (concat "CAIRN_PROVIDER=scripted")
                       (concat "CAIRN_SCRIPT=" (getenv "SCRIPT")))
                 process-environment)))
    (setq eglot-workspace-configuration
          `((:cairn . (:model (:provider "scripted") :scripted (:path ,(getenv "SCRIPT"))))))
    (eglot '(cairn-test-go-mode) project 'eglot-lsp-server
           (list (getenv "CAIRN_BIN") "serve") "go"))
  (setq cairn-test-server
        (cairn-test-wait "the eglot server" (lambda () (eglot-current-server)) 20))
  (unless (eglot--server-capable :codeActionProvider)
    (error "Server does not advertise codeActionProvider")))

(cairn-test "code action \"Explain this code\" runs"
  (let* ((beg (progn (goto-char (point-min)) (forward-line 4) (point)))
         (end (progn (forward-line 3) (point)))
         (actions (eglot-code-actions beg end))
         (explain (cl-find-if (lambda (a) (string-match-p "Explain this code"
                                                            (or (plist-get a :title) "")))
                              actions)))
    (unless explain
      (error "No \"Explain this code\" action among %S"
             (mapcar (lambda (a) (plist-get a :title)) actions)))
    ;; A Command, or a CodeAction carrying one.
    (let* ((cmd (if (stringp (plist-get explain :command)) explain (plist-get explain :command)))
           (result (eglot-execute-command cairn-test-server
                                          (intern (plist-get cmd :command))
                                          (plist-get cmd :arguments))))
      (setq cairn-test-run (plist-get result :runId))
      (unless (stringp cairn-test-run) (error "cairn.ask returned %S" result))
      (cairn-test-wait "the run to end"
                       (lambda () (cl-some (lambda (k) (cairn-test-event cairn-test-run k))
                                           '("finished" "failed" "cancelled")))
                       60)
      (let ((fin (cairn-test-event cairn-test-run "finished")))
        (unless fin
          (error "Run did not finish: %S" (cairn-test-run-events cairn-test-run))))
      (let ((seqs (mapcar (lambda (e) (plist-get e :seq)) (cairn-test-run-events cairn-test-run))))
        (unless (equal seqs (number-sequence 1 (length seqs)))
          (error "Event seq not 1..n: %S" seqs))))))

(cairn-test "the proposed edit is accepted with cairn.acceptEdit"
  (let ((proposed (cairn-test-event cairn-test-run "editProposed")))
    (unless proposed (error "No editProposed event: %S" (cairn-test-run-events cairn-test-run)))
    (setq cairn-test-edit (plist-get proposed :editId))
    (when (not (equal (buffer-string) cairn-test-original))
      (error "The buffer changed before accepting"))
    (let ((res (eglot-execute-command cairn-test-server 'cairn.acceptEdit
                                      (vector (list :editId cairn-test-edit)))))
      (unless (eq (plist-get res :applied) t) (error "cairn.acceptEdit returned %S" res)))
    (with-current-buffer (find-buffer-visiting cairn-test-file)
      (unless (string-match-p "Hello, world" (buffer-string))
        (error "Buffer not edited: %s" (buffer-string)))
      (save-buffer))
    (let ((disk (with-temp-buffer (insert-file-contents cairn-test-file) (buffer-string))))
      (unless (string-match-p "fmt.Println(\"Hello, world\")" disk)
        (error "File on disk not edited: %s" disk)))))

(cairn-test-finish)
;;; eglot-test.el ends here
