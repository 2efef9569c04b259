;; Batch check of flakesense.el with eglot against stand-in servers (run by run.sh): opens
;; $FILE, starts flakesense through rass beside the companion server (or alone with
;; MULTIPLEXER=none), waits for the diagnostics of both, and runs a server command. With
;; COMPANION=NAME the companion of every mode is NAME (one that is not installed), and with
;; NO_RASS=1 rass cannot be found: flakesense must then start alone, not die.
(setq debug-on-error t)
(require 'eglot)
(load (getenv "FLAKESENSE_EL"))
(setq flakesense-warning-threshold 0.9
      flakesense-exclude '("gen/**")
      flakesense-debounce-ms 50
      flakesense-models '("ci/flaky.idx"))
(when (equal (getenv "MULTIPLEXER") "none") (setq flakesense-eglot-multiplexer nil))
(when (getenv "COMPANION")
  (setq flakesense-eglot-companions
        `(((java-mode python-mode) (,(getenv "COMPANION"))))))
(when (getenv "NO_RASS")
  ;; Every directory of `exec-path' but those holding rass.
  (setq exec-path
        (cl-remove-if (lambda (directory)
                        (file-executable-p (expand-file-name "rass" directory)))
                      exec-path)))
(flakesense-eglot-setup)
(when (getenv "WSCONF")
  (setq-default eglot-workspace-configuration '(:flakesense (:k 5))))
(find-file (getenv "FILE"))
(apply #'eglot (eglot--guess-contact))
(let ((deadline (+ (float-time) 60)))
  (while (and (< (float-time) deadline)
              (< (length (flymake-diagnostics)) (if (getenv "ALONE") 1 2)))
    (accept-process-output nil 0.2)))
(dolist (d (flymake-diagnostics))
  (message "diagnostic: %s" (flymake-diagnostic-text d)))
(eglot-execute-command (eglot-current-server) "flakesense.markFlaky"
                       (vector (eglot--path-to-uri (buffer-file-name)) "Test#waits"))
(accept-process-output nil 1)
(eglot-shutdown (eglot-current-server))
(message "done")
