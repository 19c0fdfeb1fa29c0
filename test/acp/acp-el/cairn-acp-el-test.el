;;; cairn-acp-el-test.el --- drive `cairn acp' with acp.el in batch -*- lexical-binding: t -*-

;; Run by ../acpel.test.mjs: emacs -Q --batch -L $ACP_EL_DIR -l this-file.
;; env: CAIRN_BIN, WS (the workspace, holding notes.txt = "hello\n").
;; acp.el (agent-shell's ACP layer) is the client: initialize with fs
;; capabilities, session/new, the unstable session/set_model acp.el sends,
;; a prompt whose scripted model keeps a plan and edits notes.txt; the
;; permission is allowed, reads and the write go through this client.
;; Prints ACP-EL-OK and exits 0, or prints what failed and exits 1.

(require 'acp)
(require 'map)
(require 'cl-lib)

(defvar cairn-test-updates nil "session/update params, newest first.")
(defvar cairn-test-errors nil "acp.el error events (every stderr line is one).")
(defvar cairn-test-writes nil "fs/write_text_file paths.")
(defvar cairn-test-reads nil "fs/read_text_file paths.")
(defvar cairn-test-failures nil)

(defun cairn-test-fail (fmt &rest args)
  (push (apply #'format fmt args) cairn-test-failures))

(defun cairn-test-request (client request)
  "Send REQUEST synchronously through CLIENT; return its result."
  (condition-case err
      (or (acp-send-request :client client :request request :sync t) 'empty)
    (error (cairn-test-fail "%s failed: %S" (map-elt request :method) err) nil)))

(let* ((ws (getenv "WS"))
       (client (acp-make-client :command (getenv "CAIRN_BIN") :command-params '("acp"))))
  (acp-subscribe-to-notifications
   :client client
   :on-notification (lambda (n) (push (map-elt n 'params) cairn-test-updates)))
  (acp-subscribe-to-errors
   :client client
   :on-error (lambda (e) (push e cairn-test-errors)))
  (acp-subscribe-to-requests
   :client client
   :on-request
   (lambda (req)
     (let-alist req
       (pcase .method
         ("session/request_permission"
          (acp-send-response :client client
                             :response (acp-make-session-request-permission-response
                                        :request-id .id :option-id "allow_once")))
         ("fs/read_text_file"
          (push .params.path cairn-test-reads)
          (acp-send-response :client client
                             :response (acp-make-fs-read-text-file-response
                                        :request-id .id
                                        :content (with-temp-buffer
                                                   (insert-file-contents .params.path)
                                                   (buffer-string)))))
         ("fs/write_text_file"
          (push .params.path cairn-test-writes)
          (with-temp-file .params.path (insert .params.content))
          (acp-send-response :client client
                             :response (acp-make-fs-write-text-file-response :request-id .id)))
         (_ (cairn-test-fail "unexpected request %s" .method))))))
  (let* ((init (cairn-test-request client (acp-make-initialize-request
                                            :protocol-version 1
                                            :read-text-file-capability t
                                            :write-text-file-capability t)))
         (session (cairn-test-request client (acp-make-session-new-request :cwd ws)))
         (id (map-elt session 'sessionId)))
    (unless (equal (map-nested-elt init '(agentCapabilities mcpCapabilities http)) t)
      (cairn-test-fail "initialize: no mcpCapabilities.http: %S" init))
    (unless (equal (map-nested-elt session '(models currentModelId)) "gpt-test")
      (cairn-test-fail "session/new models: %S" (map-elt session 'models)))
    (cairn-test-request client (acp-make-session-set-model-request :session-id id :model-id "gpt-big"))
    (let ((result (cairn-test-request client (acp-make-session-prompt-request
                                               :session-id id
                                               :prompt (list '((type . "text") (text . "fix notes")))))))
      (unless (equal (map-elt result 'stopReason) "end_turn")
        (cairn-test-fail "prompt result: %S" result)))
    (let* ((updates (reverse cairn-test-updates))
           (kinds (mapcar (lambda (u) (map-nested-elt u '(update sessionUpdate))) updates))
           (plans (cl-remove-if-not (lambda (u) (equal (map-nested-elt u '(update sessionUpdate)) "plan")) updates)))
      (unless (= (length plans) 2)
        (cairn-test-fail "%d plan updates, want 2; kinds %S" (length plans) kinds))
      (let ((last (map-nested-elt (car (last plans)) '(update entries))))
        (unless (and (= (length last) 2)
                     (cl-every (lambda (e) (equal (map-elt e 'status) "completed")) last))
          (cairn-test-fail "last plan: %S" last)))
      (when (cl-some (lambda (u) (and (equal (map-nested-elt u '(update sessionUpdate)) "tool_call")
                                      (equal (map-nested-elt u '(update toolCallId)) "p1")))
                     updates)
        (cairn-test-fail "update_plan got a tool card"))
      (unless (member "session_info_update" kinds)
        (cairn-test-fail "no session_info_update; kinds %S" kinds)))
    (unless (equal cairn-test-writes (list (expand-file-name "notes.txt" ws)))
      (cairn-test-fail "writes: %S" cairn-test-writes))
    (unless cairn-test-reads
      (cairn-test-fail "no fs/read_text_file"))
    (unless (equal (with-temp-buffer (insert-file-contents (expand-file-name "notes.txt" ws)) (buffer-string))
                   "hello world\n")
      (cairn-test-fail "notes.txt was not edited"))
    (when cairn-test-errors
      (cairn-test-fail "acp.el saw errors (stderr lines): %S" cairn-test-errors))
    (acp-shutdown :client client)))

(if cairn-test-failures
    (progn (message "ACP-EL-FAILED:\n%s" (mapconcat #'identity (reverse cairn-test-failures) "\n"))
           (kill-emacs 1))
  (message "ACP-EL-OK")
  (kill-emacs 0))
