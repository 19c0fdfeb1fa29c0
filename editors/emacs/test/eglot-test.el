;;; eglot-test.el --- Cairn through plain LSP: Emacs + eglot, headless  -*- lexical-binding: t; -*-

;; Run by run.sh: emacs -Q --batch -l eglot-test.el
;; env: CAIRN_BIN, WS (workspace with hello.go), SCRIPT (scripted model)
;;
;; Uses standard LSP only, the way a user would: `eglot-code-actions' (the
;; pick answered as from the keyboard) offers "Explain this code", whose
;; command (cairn.ask) runs; the answer is shown to the user (eglot 1.9 has
;; no window/showDocument, so the server sends it as window/showMessage); the
;; proposed edit is offered as the code action "Accept Cairn's edit…" on the
;; changed lines, which applies it through workspace/applyEdit.

;;; Code:
(require 'cl-lib)
(dolist (dir (file-expand-wildcards "/usr/share/emacs/site-lisp/elpa/*"))
  (when (file-directory-p dir) (add-to-list 'load-path dir)))
(require 'eglot)

(defvar cairn-test-passed 0)
(defvar cairn-test-failed 0)
(defvar cairn-test-events nil "Every cairn/runEvent, newest first.")
(defvar cairn-test-messages nil "Every message shown to the user, newest first.")

(advice-add 'message :around
            (lambda (orig fmt &rest args)
              (let ((m (apply orig fmt args)))
                (when (stringp m) (push m cairn-test-messages))
                m)))

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

(cairn-test "eglot connects to cairn serve (configuration as in the README)"
  (let ((project (cons 'transient cairn-test-ws)))
    ;; eglot 1.9: buffer-local, so the README says setq-default.
    (setq-default eglot-workspace-configuration
                  '((:cairn . (:model (:provider "scripted")))))
    ;; Settings that start programs or pick where code goes are given at
    ;; startup (initializationOptions): a later change asks first.
    (eglot '(cairn-test-go-mode) project 'eglot-lsp-server
           (list (getenv "CAIRN_BIN") "serve"
                 :initializationOptions
                 `(:cairn (:model (:provider "scripted") :scripted (:path ,(getenv "SCRIPT")))))
           "go"))
  (setq cairn-test-server
        (cairn-test-wait "the eglot server" (lambda () (eglot-current-server)) 20))
  (unless (eglot--server-capable :codeActionProvider)
    (error "Server does not advertise codeActionProvider")))

(defun cairn-test-pick-action (beg end title-re)
  "Run `eglot-code-actions' on BEG..END as a user would, picking TITLE-RE."
  (let ((offered nil)
        (last-nonmenu-event ?\r))      ; invoked from the keyboard: completing-read
    (cl-letf (((symbol-function 'completing-read)
               (lambda (_prompt items &rest _)
                 (setq offered (mapcar #'car items))
                 (or (cl-find-if (lambda (s) (string-match-p title-re s)) offered)
                     (error "No action matching %s among %S" title-re offered)))))
      (eglot-code-actions beg end nil t))
    offered))

(defun cairn-test-line-region (first last)
  "Buffer positions of lines FIRST..LAST (1-based)."
  (save-excursion
    (goto-char (point-min)) (forward-line (1- first))
    (let ((beg (point)))
      (forward-line (1+ (- last first)))
      (cons beg (point)))))

(cairn-test "code action \"Explain this code\": the answer is shown"
  (let ((r (cairn-test-line-region 5 7)))
    (cairn-test-pick-action (car r) (cdr r) "Explain this code"))
  (let ((shown (cairn-test-wait "the answer shown to the user"
                                (lambda () (cl-find-if (lambda (m) (string-match-p "This prints a greeting" m))
                                                       cairn-test-messages))
                                60)))
    (unless (string-match-p "Accept Cairn's edit" shown)
      (error "The answer does not say how to accept the edit: %s" shown))
    (cairn-test-out "  shown: %s" (car (split-string shown "\n")))))

(cairn-test "a bare cursor is not offered \"Explain this code\"; RET's default never accepts every hunk"
  (let* ((r (cairn-test-line-region 6 6))
         (titles (mapcar (lambda (a) (plist-get a :title)) (eglot-code-actions (car r) (car r)))))
    (when (member "Explain this code" titles)
      (error "Explain offered on a bare cursor: %S" titles))
    (cairn-test-out "  on the cursor: %S" titles)
    (unless (equal (car titles) "Accept this hunk of Cairn's edit…")
      (error "The first (default) action on a changed line: %S" titles)))
  ;; As a user pressing RET at eglot's prompt: the default is taken.
  (let ((picked nil)
        (last-nonmenu-event ?\r))
    (cl-letf (((symbol-function 'completing-read)
               (lambda (_prompt _items _pred _req _init _hist def &rest _)
                 (setq picked def)
                 (throw 'cairn-test-picked nil))))
      (catch 'cairn-test-picked
        (let ((r (cairn-test-line-region 6 6)))
          (eglot-code-actions (car r) (car r) nil t))))
    (when (equal picked "Accept Cairn's edit…")
      (error "RET would accept every hunk"))
    (unless picked (error "eglot offered no default"))))

(cairn-test "code action \"Accept Cairn's edit…\" on the changed line applies the edit"
  (unless (equal (buffer-string) cairn-test-original)
    (error "The buffer changed before accepting"))
  (let* ((r (cairn-test-line-region 6 6))
         (offered (cairn-test-pick-action (car r) (cdr r) "Accept Cairn's edit")))
    (unless (cl-some (lambda (s) (string-match-p "Reject Cairn's edit" s)) offered)
      (error "No Reject action next to Accept: %S" offered)))
  (cairn-test-wait "the edit in the buffer"
                   (lambda () (string-match-p "fmt.Println(\"Hello, world\")" (buffer-string)))
                   30)
  (save-buffer)
  (let ((disk (with-temp-buffer (insert-file-contents cairn-test-file) (buffer-string))))
    (unless (equal disk (replace-regexp-in-string "\"Hello\"" "\"Hello, world\"" cairn-test-original))
      (error "File on disk is not the original with the edit: %s" disk))))

(cairn-test "the accept actions are gone once the edit is decided"
  (let* ((r (cairn-test-line-region 6 6))
         (titles (mapcar (lambda (a) (plist-get a :title)) (eglot-code-actions (car r) (cdr r)))))
    (when (cl-some (lambda (s) (string-match-p "Cairn's edit" (or s ""))) titles)
      (error "Still offered after the accept: %S" titles))))

(defconst cairn-test-note "// a note the user has not saved\n")

(cairn-test "accept leaves unrelated unsaved text unsaved"
  ;; The user types elsewhere in the file and does not save, then asks
  ;; again and accepts the new edit: the buffer gets the edit and keeps the
  ;; note, stays modified, and the file on disk holds neither the note nor
  ;; the edit (eglot saves nothing; the user saves as usual).
  (let ((disk-before (with-temp-buffer (insert-file-contents cairn-test-file) (buffer-string))))
    (goto-char (point-max))
    (insert cairn-test-note)
    (unless (buffer-modified-p) (error "The buffer is not modified after typing"))
    (let ((r (cairn-test-line-region 5 7)))
      (cairn-test-pick-action (car r) (cdr r) "Explain this code"))
    (cairn-test-wait "the second answer"
                     (lambda () (cl-find-if (lambda (m) (string-match-p "changed the greeting again" m))
                                            cairn-test-messages))
                     60)
    (let ((r (cairn-test-line-region 6 6)))
      (cairn-test-pick-action (car r) (cdr r) "Accept Cairn's edit"))
    (cairn-test-wait "the second edit in the buffer"
                     (lambda () (string-match-p "fmt.Println(\"Hello, Cairn\")" (buffer-string)))
                     30)
    (unless (string-suffix-p cairn-test-note (buffer-string))
      (error "The unsaved note is gone from the buffer: %S" (buffer-string)))
    (unless (buffer-modified-p)
      (error "The buffer was saved by the accept"))
    (let ((disk (with-temp-buffer (insert-file-contents cairn-test-file) (buffer-string))))
      (unless (equal disk disk-before)
        (error "The accept wrote the file on disk: %S" disk)))))

(cairn-test-finish)
;;; eglot-test.el ends here
