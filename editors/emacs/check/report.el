;; Helpers of the checks against the real server (server-eglot.el, server-lsp-mode.el): what
;; the buffer shows, in a JSON report at $REPORT that run.sh judges.
(require 'cl-lib)
(require 'json)
(require 'seq)

(defvar check-report nil "The report, an alist written as a JSON object.")

(defun check-put (key value)
  "Sets KEY of the report to VALUE."
  (setq check-report (cons (cons key value) (assq-delete-all key check-report))))

(defun check-write-report ()
  (with-temp-file (getenv "REPORT")
    (insert (json-encode check-report))))

(defun check-wait (seconds done)
  "Lets Emacs run, as it does between keystrokes, until DONE returns non-nil or SECONDS pass.
Records in the report how long it took under the key `waited'."
  (let ((start (float-time)))
    (while (and (not (funcall done)) (< (- (float-time) start) seconds))
      (accept-process-output nil 0.1))
    (check-put 'waited (- (float-time) start))))

(defun check-diagnostic (beg end text)
  "A diagnostic from BEG to END as a JSON object: zero-based line, columns, text."
  (save-excursion
    (goto-char beg)
    (list (cons 'line (1- (line-number-at-pos)))
          (cons 'start (current-column))
          (cons 'end (progn (goto-char end) (current-column)))
          (cons 'text text))))

(defun check-test-position (name)
  "The zero-based line and columns of the test name NAME where it is defined."
  (save-excursion
    (goto-char (point-min))
    (re-search-forward (concat "\\(?:def\\|void\\|fn\\) +\\(" (regexp-quote name) "\\)\\_>"))
    (goto-char (match-beginning 1))
    (list (1- (line-number-at-pos)) (current-column) (+ (current-column) (length name)))))

(defun check-goto-test (name)
  (goto-char (point-min))
  (re-search-forward (concat "\\(?:def\\|void\\|fn\\) +\\(" (regexp-quote name) "\\)\\_>"))
  (goto-char (match-beginning 1)))

(defun check-on-test (diagnostics name)
  "The diagnostic of DIAGNOSTICS that lies on the name of the test NAME, if any."
  (pcase-let ((`(,line ,start ,end) (check-test-position name)))
    (seq-find (lambda (d) (and (= (alist-get 'line d) line)
                               (<= (alist-get 'start d) start)
                               (>= (alist-get 'end d) end)))
              diagnostics)))

;;; The order in which eglot's connection handles the reply to `workspace/executeCommand' and
;;; the publication that holds the marked test's new diagnostic.

(defvar check-command-id nil "The id of the `workspace/executeCommand' request, once sent.")
(defvar check-order nil "Newest first: `publication' and `reply', as jsonrpc.el handled them.")

(defun check-record-order ()
  "Records, from now on, what `check-order' says."
  (advice-add 'jsonrpc-connection-send :before
              (lambda (_connection &rest args)
                (when (equal (format "%s" (plist-get args :method)) ":workspace/executeCommand")
                  (setq check-command-id (plist-get args :id)))))
  (advice-add 'jsonrpc-connection-receive :before
              (lambda (_connection message)
                (cond ((and check-command-id (equal (plist-get message :id) check-command-id)
                            (not (plist-get message :method)))
                       (push "reply" check-order))
                      ((and check-command-id
                            (equal (plist-get message :method) "textDocument/publishDiagnostics")
                            (check-publication-marks (plist-get message :params)))
                       (push "publication" check-order))))))

(defun check-publication-marks (params)
  "Whether the published PARAMS hold a diagnostic on the name of the test $MARK."
  (pcase-let ((`(,line ,start ,_) (with-current-buffer (find-buffer-visiting (getenv "FILE"))
                                     (check-test-position (getenv "MARK")))))
    (seq-find (lambda (d)
                (let ((range-start (plist-get (plist-get d :range) :start)))
                  (and (= (plist-get range-start :line) line)
                       (<= (plist-get range-start :character) start))))
              (plist-get params :diagnostics))))
