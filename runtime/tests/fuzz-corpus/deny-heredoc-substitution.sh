cat <<EOF
plain text
$(rm -rf ~)
EOF
