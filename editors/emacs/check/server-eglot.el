;; Batch check of flakesense.el with eglot and the real server (run by run.sh).  Opens $FILE,
;; starts `flakesense serve' through rass beside a stand-in companion (or alone with
;; MULTIPLEXER=none), waits for the warning on the test $FLAGGED, lists the code actions on the
;; test $MARK and picks "Mark as flaky" as a user would, then waits, without editing, for the
;; new diagnostic on $MARK.  What it saw goes to $REPORT as JSON for run.sh to judge.
(setq debug-on-error t)
;; As an interactive Emacs does at startup: the packages' autoloads, lsp-mode's hooks among them.
(package-activate-all)
(require 'eglot)
(require 'json)
(load (getenv "FLAKESENSE_EL"))
(load (expand-file-name "report.el" (file-name-directory load-file-name)))
(setq flakesense-program (getenv "FLAKESENSE"))
(when (equal (getenv "MULTIPLEXER") "none") (setq flakesense-eglot-multiplexer nil))
(flakesense-eglot-setup)

(defun check-diagnostics ()
  "The flakesense diagnostics Flymake shows, as reported by `check-diagnostic'."
  (delq nil (mapcar (lambda (d)
                      (and (string-prefix-p "flakesense" (flymake-diagnostic-text d))
                           (check-diagnostic (flymake-diagnostic-beg d) (flymake-diagnostic-end d)
                                             (flymake-diagnostic-text d))))
                    (flymake-diagnostics))))

(find-file (getenv "FILE"))
(apply #'eglot (eglot--guess-contact))
(check-record-order)
(check-wait 120 (lambda () (check-on-test (check-diagnostics) (getenv "FLAGGED"))))
(check-put 'before (check-diagnostics))

(check-goto-test (getenv "MARK"))
(let* ((actions (eglot-code-actions (point) (point)))
       (titles (mapcar (lambda (action) (plist-get action :title)) actions))
       (mark (seq-find (lambda (title) (string-prefix-p "Mark as flaky" title)) titles)))
  (check-put 'actions titles)
  ;; What `M-x eglot-code-actions' does when the user picks the title.
  (cl-letf (((symbol-function 'completing-read) (lambda (&rest _) mark)))
    (let ((last-nonmenu-event 13))
      (eglot-code-actions (point) (point) nil t))))
(check-put 'index (file-exists-p (expand-file-name ".flakesense/index" (project-root (project-current)))))
;; Only waiting: a message held by the client stays held, as it would for a user.
(check-wait 10 (lambda () (check-on-test (check-diagnostics) (getenv "MARK"))))
(check-put 'after (check-diagnostics))
(check-put 'order (reverse check-order))
(check-write-report)
(with-current-buffer (jsonrpc-events-buffer (eglot-current-server))
  (write-region (point-min) (point-max) (concat (getenv "REPORT") ".events")))
(let ((server (eglot-current-server)))
  (ignore-errors (eglot-shutdown server)))
(kill-emacs 0)
